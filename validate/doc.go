// Package validate checks Agent Skill folders against the Agent Skills
// specification: SKILL.md frontmatter, name and description rules, allowed
// fields, and files that would escape the skill folder.
package validate
