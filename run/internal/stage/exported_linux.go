package stage

import "github.com/skill-sandbox/skill-sandbox/run/internal/stageconfig"

// SetupMounts applies the mount namespace layer alone (see setupMounts),
// for whitebox tests in run that build the root in a child process and
// look at it from there.
func SetupMounts(cfg *stageconfig.Config) error { return setupMounts(&config{Config: cfg}) }

// OpenGrants opens the grants of cfg as the init stage does before it
// mounts them (see openGrants), for tests in run that swap a grant between
// the supervisor's check and the mount.
func OpenGrants(cfg *stageconfig.Config) (map[string]int, error) {
	return openGrants(&config{Config: cfg})
}
