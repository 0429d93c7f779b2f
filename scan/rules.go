package scan

// Rule ids, the rule field of a Finding and the ruleId of SARIF results.
const (
	RuleHiddenUnicode   = "hidden-unicode"
	RulePromptInjection = "prompt-injection"
	RulePipeToShell     = "pipe-to-shell"
	RuleCredentialRead  = "credential-read"
	RuleObfuscatedExec  = "obfuscated-exec"
	RuleNativeBinary    = "native-binary"
	RuleArchive         = "archive"
	RuleDisguised       = "disguised-file"
	RuleExecOutside     = "executable-outside-scripts"
	RuleLink            = "link-or-special-file"
	RuleLoadTimeCommand = "load-time-command"
	RuleNetworkEndpoint = "network-endpoint"
	RuleNotScanned      = "not-scanned"
)

// Rule describes one check.
type Rule struct {
	// ID is the stable identifier, e.g. "pipe-to-shell".
	ID string `json:"id"`
	// Severity is the highest severity the rule reports (some findings of
	// a rule may be lower, e.g. a large asset is info, a large script low).
	Severity Severity `json:"severity"`
	// Summary is one line; Help says what triggers the rule and what a
	// reviewer should check.
	Summary string `json:"summary"`
	Help    string `json:"help"`
}

// Rules returns every rule, in a fixed order.
func Rules() []Rule {
	return []Rule{
		{RuleHiddenUnicode, Critical, "Invisible or direction-changing Unicode",
			"Bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C), zero-width characters (U+200B-U+200D, U+2060-U+2064, U+FEFF after the start), Unicode tag characters (U+E0000-U+E007F), runs of variation selectors (U+FE00-U+FE0F, U+E0100-U+E01EF, one hidden byte each) and Hangul fillers make text read differently by a model, a terminal and a reviewer. Tag characters and variation-selector runs, which can spell hidden ASCII, are critical; the others high. Zero-width joiners between two non-ASCII characters (emoji sequences, Indic and Arabic scripts), tag sequences of flag emoji and a single variation selector after a character are not reported."},
		{RulePromptInjection, High, "Instructions that turn the agent against its user",
			"Markdown telling the agent to ignore its instructions or rules, to keep actions from the user, or to send files, secrets or conversation data to a URL or IP address."},
		{RulePipeToShell, Critical, "Download piped into a shell or interpreter",
			"curl, wget or a PowerShell web request piped into sh, bash, python, node, perl, ruby or iex; bash <(curl ...); eval \"$(curl ...)\"; exec(urlopen(...).read()); curl -o f URL && sh f with no checksum check. The downloaded code is never reviewed and can change at any time."},
		{RuleCredentialRead, High, "Reads of credential locations",
			"Paths of SSH keys (~/.ssh, id_rsa), cloud credentials (~/.aws, gcloud, kube, docker config), .netrc and git credentials, browser profiles and their password and cookie stores, and OS keychains (security find-generic-password, Library/Keychains, gnome-keyring, kwallet)."},
		{RuleObfuscatedExec, Critical, "Encoded blob decoded and executed",
			"base64 or hex decoding whose result is executed: base64 -d | sh, exec(base64.b64decode(...)), eval(atob(...)), or a variable assigned from a decoder and later passed to exec, eval, os.system or subprocess."},
		{RuleNativeBinary, High, "Compiled binary",
			"ELF, Mach-O, PE or WebAssembly files: code that cannot be reviewed as text."},
		{RuleArchive, Medium, "Archive",
			"zip, tar, gzip, 7z, rar, jar, wheel and similar files can carry code that is unpacked later. Office documents (docx, xlsx, pptx, odt) are zip files but are not reported."},
		{RuleDisguised, Medium, "File whose content does not match its name",
			"A file named like a data format (.pdf, .png, .jpg, .gif, fonts, Office documents) that does not start with that format's signature, e.g. a script named logo.png. Its content is scanned as text."},
		{RuleExecOutside, Low, "Executable file outside scripts/",
			"A file with an execute bit outside any folder named scripts: skill-sandbox runs only scripts/, so an executable elsewhere is unexpected."},
		{RuleLink, Medium, "Symbolic link or special file",
			"Symlinks (high when they point outside the skill), FIFOs, sockets and devices. A signed skill may not contain them."},
		{RuleLoadTimeCommand, Medium, "Command run when the skill loads",
			"SKILL.md body lines starting with ! and inline !`command` run a shell command as the skill is loaded, before the agent or user sees the output. Code blocks are not reported."},
		{RuleNetworkEndpoint, Info, "Network endpoint named in code",
			"URLs and IP addresses in scripts and code files, listed so that an --allow-host list can be written. Not a problem by itself."},
		{RuleNotScanned, High, "File not read through",
			"A file larger than the scan limit (1 MiB), one that grew while it was read, one that cannot be read, or one past the skill's 64 MiB read budget. High for what runs or instructs: scripts and source files, files under scripts/, shebang files, executables, Markdown; nobody read all of it, so a check must not pass it (of a large one the first 1 MiB and the last 64 KiB are scanned, so padding on one side does not hide a payload; the middle is not read). A file that cannot be read is high whatever it is. Info for data (JSON, CSV, text); binary data such as images and fonts is never read as text and never reported. skill-sandbox scan --accept-unscanned reports these findings without failing on them."},
	}
}

// Finding is one thing a rule found.
type Finding struct {
	Rule     string   `json:"rule"`
	Severity Severity `json:"severity"`
	// File is relative to the skill folder, with '/' separators.
	File string `json:"file"`
	// Line is 1-based; 0 when the finding is about the whole file.
	Line int `json:"line"`
	// Reason is a short human explanation, e.g. `pipes a curl download
	// into bash`.
	Reason string `json:"reason"`
}
