package stageconfig

// DefaultDenyPaths returns the built-in deny list: places holding
// credentials, keys, tokens, shell and REPL history or browser profiles.
// A deny entry wins over every grant: a grant that is (or lies inside) an
// entry is refused, an entry inside a read grant is hidden from the script
// (an empty, inaccessible folder or file in its place), and a write grant
// may not contain an entry at all, existing or not, since the script could
// create it (~/.ssh/authorized_keys). Sandbox.AllowDenied lifts single
// entries.
//
// An entry starting with "~/" applies in every home folder: the caller's
// $HOME, /root and the home folder of every account in /etc/passwd. Other
// entries are absolute; their last element may hold filepath.Match
// wildcards. Paths under /proc, /sys, /dev and /run are never granted,
// whatever the deny list says.
func DefaultDenyPaths() []string {
	paths := []string{
		// Keys, tokens and cloud or cluster credentials.
		"~/.ssh", "~/.gnupg", "~/.aws", "~/.azure", "~/.config/gcloud", "~/.kube",
		"~/.docker", "~/.netrc", "~/.git-credentials", "~/.config/git/credentials",
		"~/.password-store", "~/.config/gh", "~/.config/hub", "~/.pypirc", "~/.npmrc",
		"~/.yarnrc", "~/.yarnrc.yml", "~/.cargo/credentials", "~/.cargo/credentials.toml",
		"~/.gem/credentials", "~/.m2/settings.xml", "~/.gradle/gradle.properties",
		"~/.terraform.d/credentials.tfrc.json", "~/.vault-token", "~/.config/op",
		"~/.s3cfg", "~/.boto", "~/.config/rclone", "~/.local/share/keyrings", "~/.pki",
		"~/.pgpass", "~/.my.cnf", "~/.oci", "~/.config/doctl", "~/.config/hcloud", "~/.fly",
		"~/.databrickscfg", "~/.kaggle", "~/.huggingface/token", "~/.cache/huggingface/token",
		// More tools' logins (docs/grants.md names where each stores it):
		// registries, build tools, infrastructure and hosting CLIs.
		"~/.config/containers/auth.json", "~/.m2/settings-security.xml",
		"~/.config/glab-cli", "~/.pulumi/credentials.json", "~/.config/composer/auth.json",
		"~/.composer/auth.json", "~/.terraformrc", "~/.config/ngrok", "~/.ngrok2",
		"~/.wrangler", "~/.config/.wrangler", "~/.config/netlify", "~/.netlify",
		"~/.local/share/com.vercel.cli", "~/.config/stripe", "~/.config/helm/registry",
		"~/.sentryclirc", "~/.config/configstore/firebase-tools.json", "~/.supabase",
		"~/.railway", "~/.config/linode-cli", "~/.cloudflared", "~/.tsh", "~/.jfrog",
		"~/.snowflake", "~/.config/pypoetry/auth.toml", "~/.config/sops/age",
		"~/.config/tea", "~/.local/share/atuin",
		// Tokens of the coding agents that run skills, and of their helpers.
		"~/.claude/.credentials.json", "~/.codex/auth.json", "~/.config/github-copilot",
		"~/.gemini", "~/.continue", "~/.aider.conf.yml",
		// Shell and REPL history.
		"~/.bash_history", "~/.zsh_history", "~/.zhistory", "~/.sh_history", "~/.history",
		"~/.local/share/fish/fish_history", "~/.python_history", "~/.node_repl_history",
		"~/.psql_history", "~/.mysql_history", "~/.sqlite_history", "~/.lesshst",
		"~/.wget-hsts", "~/.viminfo",
		// Browser and mail profiles (cookies, saved passwords).
		"~/.mozilla", "~/.thunderbird", "~/.config/google-chrome", "~/.config/chromium",
		"~/.config/BraveSoftware", "~/.config/microsoft-edge", "~/.config/vivaldi",
		"~/.config/opera", "~/snap/firefox", "~/snap/chromium",
		// Host secrets and sockets of other users' sessions.
		"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/sudoers.d", "/etc/ssh",
		"/tmp/ssh-*", "/tmp/.X11-unix", "/tmp/.ICE-unix", "/tmp/tmux-*",
		"/var/run", "/var/lib/docker",
	}
	// The host's keys and credentials in /etc, which the sandbox's own
	// /etc masks too: a grant of /etc (or of a folder in it) hides them
	// as well, also from a caller whose groups may read them (ssl-cert
	// and /etc/ssl/private).
	for _, e := range EtcSecrets() {
		if e != "ssh" {
			paths = append(paths, "/etc/"+e)
		}
	}
	return paths
}

// EtcSecrets lists, relative to /etc, the host's keys, VPN and Wi-Fi
// secrets and the credentials of tools and services kept there. Each is
// a path or, in its last element, a filepath.Match pattern. They are
// masked in the sandbox's /etc and on the deny list of grants.
func EtcSecrets() []string {
	return []string{
		// Keys and certificates' private halves.
		"ssh", "ssl/private", "pki/tls/private", "pki/CA/private", "pki/libvirt/private",
		"letsencrypt", "*.keytab", "credstore", "credstore.encrypted",
		// VPN, Wi-Fi and dial-up secrets.
		"ipsec.secrets", "ipsec.d", "swanctl", "openvpn", "wireguard", "ppp", "wpa_supplicant",
		// Credentials of tools, services and their agents.
		"docker", "containerd", "containers/auth.json", "kubernetes", "rancher",
		"vault", "vault.d", "consul.d", "nomad.d", "gitlab", "gitlab-runner", "buildkite-agent",
		"salt/pki", "puppet/ssl", "puppetlabs/puppet/ssl", "chef", "cloud",
		"apt/auth.conf", "apt/auth.conf.d", "mysql/debian.cnf", "postfix/sasl_passwd*",
		"msmtprc", "ssmtp", "davfs2/secrets", "boto.cfg", "ldap/slapd.d", "openldap/slapd.d",
		"pip.conf", "npmrc",
	}
}

// GrantMount is one grant as the init process mounts it.
type GrantMount struct {
	Path  string
	Write bool
	// Exec leaves a read grant's files executable (no noexec): the
	// environment of an interpreter of the caller's choice, whose
	// programs and native libraries must run (Sandbox.Interpreters).
	Exec bool
	// Tree is the descriptor, in the init process, of a detached copy of
	// the grant made by the supervisor (root callers, see grantTrees);
	// 0 when the init process opens Path itself.
	Tree int `json:",omitempty"`
	// Dev and Ino identify the folder or file planGrants checked. The
	// path is opened again later (by the init process, or open_tree for a
	// root caller); a script of another run that can write to a parent
	// could swap the path for a symlink in between, so the opened file
	// must be this one (see sameGrant).
	Dev uint64 `json:",omitempty"`
	Ino uint64 `json:",omitempty"`
	// Held is the number of mounts the mount table read at planning
	// showed below Path (each granted on its own or at or under a masked
	// entry: see grants.CheckSubmounts). A grant is bound alone, never
	// recursively, where it can be: a mount made below it after planning
	// must not come along unchecked. Where it cannot (the init process's
	// bind in a user namespace, where a bind without MS_REC of a folder
	// holding a locked mount fails with EINVAL), a grant that held mounts
	// is bound recursively and the init process refuses the run unless
	// exactly Held mounts came along (listmount(2)); one that held none is
	// bound alone, and a mount made there since fails the bind.
	Held int `json:",omitempty"`
	// Below lists the mounts planning saw below Path that are not granted
	// on their own (those are bound as grants), parents first: where the
	// grant is bound alone from the supervisor's clone, each is cloned
	// alone too, checked to be the very mount planning saw, and attached
	// at its path, so that the masks on them apply as planned.
	Below []SubMount `json:",omitempty"`
}

// SubMount is a mount planning saw below a grant (GrantMount.Below).
type SubMount struct {
	Path string
	// MntID is its mount id: the unique one that is never reused
	// (statx(2) STATX_MNT_ID_UNIQUE, Linux 6.8) with Unique set, else the
	// one of /proc/self/mountinfo, which a mount made in the place of one
	// unmounted may get again (as a fresh tmpfs gets its device number).
	// Dev and Ino identify its root folder or file.
	MntID    uint64
	Unique   bool `json:",omitempty"`
	Dev, Ino uint64
	// Tree is the descriptor, in the init process, of the supervisor's
	// clone of it; 0 when the grant is bound by the init process.
	Tree int `json:",omitempty"`
}

// GrantRule is one Landlock rule for the grants.
type GrantRule struct {
	Path string
	// Access: "r" read, "rx" read and execute, "rw" read and write, "l"
	// list the folder only.
	Access string
}

// GrantAlias is a grant as the user typed it when a symlink lies on the
// way to what was granted (--read ~/datalink, ~/datalink -> /mnt/data):
// the init process creates a symlink at Path, in the sandbox's own root
// (its tmpfs, or the private /tmp), to Target, the resolved grant, so that
// the arguments the user types work unchanged. It grants nothing: only
// Target is mounted and in the Landlock rules.
type GrantAlias struct {
	Path   string
	Target string
}

// SystemDirs are the host's system folders the sandbox shows whole (bound
// in, or re-created as the host's symlinks), for both file layers.
func SystemDirs() []string {
	return []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}
}
