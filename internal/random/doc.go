// Package random reads random bytes for names and ids (request ids, work
// folder names) the cheapest way a short-lived process can: see Read.
package random
