package gvisor

// containerID is the container's id: runsc accepts letters, digits and
// "-_.+" only.
func containerID(requestID string) string {
	id := []byte("ss-")
	for _, c := range []byte(requestID) {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			id = append(id, c)
		}
	}
	return string(id)
}
