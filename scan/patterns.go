package scan

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
)

// decodeCallExpr matches a call that decodes data; reDecodeAssign embeds it.
const decodeCallExpr = `\b(b64decode|b32decode|b85decode|a85decode|decodebytes|fromhex|unhexlify|atob)\s*\(|Buffer\.from\([^\n]{0,200}?['"](base64|hex)['"]|codecs\.decode\([^\n]{0,200}?['"](hex|base64|rot.?13)['"]|zlib\.decompress\(|marshal\.loads\(`

// Prompt injection in Markdown.
var (
	reIgnoreRules  = &lazyre.Regexp{Expr: `(?i)\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?\b(previous|prior|above|earlier|all|any|your|system|safety|security)\b[^.\n]{0,30}?\b(instructions?|rules|guidelines|system prompts?|polic(y|ies)|guardrails|restrictions)\b|\b(ignore|disregard|forget)\s+(everything|all|anything)\s+(that\s+)?(you\s+(were|have\s+been|'ve\s+been)\s+(told|given|instructed)|you\s+know\s+about\s+your\s+rules)\b|\b(enter|you\s+are\s+(now\s+)?in|switch\s+to|enable|activate)\s+(god|jailbreak|unrestricted|dan)\s+mode\b|\byou\s+are\s+(now\s+)?in\s+developer\s+mode\b`}
	reHideFromUser = &lazyre.Regexp{Expr: `(?i)\b(do not|don't|dont|never|without)\s+(\w+\s+){0,3}?(tell|telling|inform|informing|notify|notifying|mention|mentioning|reveal|revealing|alert|alerting|letting)\b[^.\n]{0,20}?\bthe user\b|\b(hide|conceal|keep)\b[^.\n]{0,40}?\bfrom the user\b|\b(silently|secretly|covertly)\s+(send|upload|post|delete|remove|run|execute|install|copy|exfiltrate|transmit)\b`}
	reSendData     = &lazyre.Regexp{Expr: `(?i)\b(send|upload|post|transmit|exfiltrate|forward|copy|leak)\b[^\n]{0,60}?\b(contents?|files?|credentials?|secrets?|keys?|tokens?|passwords?|env(ironment)?|history|conversation|cookies|\.ssh|\.aws)\b[^\n]{0,60}?\b(to|at|into)\s+\S*(https?://|\b\d{1,3}(\.\d{1,3}){3}\b|webhook|ngrok|requestbin|pastebin)`}
)

// Downloads executed.
var (
	reDownloader   = &lazyre.Regexp{Expr: `(?i)\b(curl|wget|fetch|iwr|irm|invoke-webrequest|invoke-restmethod)\b`}
	reSubstitution = &lazyre.Regexp{Expr: `(?i)(\b(ba|z|k|da)?sh|\bsource|^\s*\.|\b(python[\d.]*|perl|ruby|node|php|deno|bun)(\s+-)?)\s+<\(\s*(curl|wget)\b|\b(eval|(ba|z)?sh\s+-c)\s+["']?(\$\(|` + "`" + `)\s*(curl|wget)\b|\b(exec|eval)\s*\(\s*(urllib\.request\.)?(urlopen|requests\.get|httpx\.get|fetch)\b|\biex\b[^\n]*\b(downloadstring|iwr|invoke-webrequest|irm)\b|\b(downloadstring)\b[^\n]*\|\s*iex\b`}
)

// Decoded and executed.
var (
	reShellDecode = &lazyre.Regexp{Expr: `(?i)(base64\s+(-d|--decode|-D)\b|xxd\s+-r|openssl\s+(base64|enc)\b[^|\n]*\s-d\b)`}
	reDecodeCall  = &lazyre.Regexp{Expr: decodeCallExpr}
	// reDecodeSubst matches a shell decode whose output a command or
	// process substitution hands to eval, a shell or an interpreter as
	// its program: eval "$(… | base64 -d)", python3 -c "$(…)", sh <(…).
	reDecodeSubst  = &lazyre.Regexp{Expr: `(?i)(\beval|\b(ba|z|k|da)?sh(\s+-c)?|\bsource|^\s*\.|\bpython[\d.]*\s+-c|\b(perl|ruby|node)\s+-e)\s+["']?(\$\(|<\(|` + "`" + `)[^)` + "`" + `]*?(base64\s+(-d|--decode|-D)\b|xxd\s+-r|openssl\s+(base64|enc)\b[^)]*\s-d\b)`}
	reExecCall     = &lazyre.Regexp{Expr: `\b(exec|eval|execSync|spawnSync|Function)\s*\(|\bcompile\s*\([^)]*['"]exec['"]|\bos\.(system|popen|exec\w*)\s*\(|\bsubprocess\.\w+\s*\(|\bchild_process\.\w+\s*\(|\bvm\.runIn\w+\s*\(`}
	reDecodeAssign = &lazyre.Regexp{Expr: `^\s*(?:(?:const|let|var|export)\s+)?([A-Za-z_]\w*)\s*=[^=].*?(` + decodeCallExpr + `|base64\s+(-d|--decode)|xxd\s+-r)`}
)

// Credential locations. .npmrc and .pypirc in quotes count only joined to
// the home folder: a project has its own (path.join(dir, ".npmrc")).
var reCredential = &lazyre.Regexp{Expr: `(?i)(~|\$home|\$\{home\}|/home/[^/\s]+|/root|expanduser\(\s*["']~)/\.(ssh|aws|gnupg|kube|docker|azure|password-store|pypirc|npmrc|yarnrc(\.yml)?|vault-token|s3cfg|boto|my\.cnf|oci|fly|databrickscfg|kaggle|pki)\b|["'/]\.ssh/|["']\.(ssh|aws|gnupg|azure|vault-token|databrickscfg|kaggle)["']|\bhome(dir)?\(\)\s*[,/]\s*["']\.(npmrc|pypirc)["']|expanduser\(\s*["']~["']\s*\)\s*[,/]\s*["']\.(npmrc|pypirc)["']|\.config/(gh|hub|op|rclone|doctl|hcloud|github-copilot|git/credentials)([^\w.-]|$)|\.(cargo|gem)/credentials\b|\.m2/settings\.xml\b|\.gradle/gradle\.properties\b|\.terraform\.d/credentials|\.local/share/keyrings\b|huggingface/token\b|\.claude/\.credentials\.json\b|\.codex/auth\.json\b|\bid_(rsa|ed25519|ecdsa|dsa)\b|\.aws/(credentials|config)\b|\.config/gcloud\b|\.kube/config\b|\.docker/config\.json\b|\.netrc\b|\.git-credentials\b|\.pgpass\b|(google/chrome|google-chrome|chromium|bravesoftware/brave-browser|microsoft/edge)/(default|profile|user data)|\.mozilla/firefox|\blogin data\b|\blogins\.json\b|\bkey[34]\.db\b|\bcookies\.sqlite\b|library/keychains|\.keychain(-db)?\b|\bsecurity["']?\s*,?\s*["']?(find|dump)-(generic-password|internet-password|keychain)|\bdump-keychain\b|\bgnome-keyring\b|\bkwallet\b|\bsecret-tool\s+lookup\b|/etc/shadow\b`}

// Network endpoints.
var (
	reURL  = &lazyre.Regexp{Expr: `(?i)\b(https?|wss?|ftp)://[^\s"'<>()\x60\\]+`}
	reIPv4 = &lazyre.Regexp{Expr: `(^|[^\w.])((25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3})(:\d{1,5})?($|[^\w.])`}
)

// Load-time commands in SKILL.md.
var (
	reBangInline = &lazyre.Regexp{Expr: "!`[^`]+`"}
	reBangLine   = &lazyre.Regexp{Expr: `^\s*!\s*[A-Za-z./~$]`}
)

// isShell and isInterpreter name the programs that run what is piped into
// them. They are switches rather than maps: a map literal is built at
// every start of every program linking the package.
func isShell(name string) bool {
	switch name {
	case "sh", "bash", "zsh", "ksh", "dash", "fish":
		return true
	}
	return false
}

func isInterpreter(name string) bool {
	switch name {
	case "python", "perl", "ruby", "node", "php", "pwsh", "powershell", "iex", "invoke-expression", "deno", "bun":
		return true
	}
	return false
}

// pipedInto reports the shell or interpreter that the output of the
// command matched by from is piped into, on this line, to be run as a
// program; "" if none.
func pipedInto(line string, from *regexp.Regexp) string {
	loc := from.FindStringIndex(line)
	if loc == nil {
		return ""
	}
	segs := strings.Split(line[loc[1]:], "|")
	for _, seg := range segs[1:] {
		if seg == "" { // "||"
			return ""
		}
		words := strings.Fields(seg)
		for len(words) > 0 && (words[0] == "sudo" || words[0] == "env" || strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
			words = words[1:]
		}
		if len(words) == 0 {
			continue
		}
		name := strings.ToLower(path.Base(strings.Trim(words[0], `"'();`)))
		base := strings.TrimRight(name, "0123456789.")
		args := words[1:]
		switch {
		case isShell(base):
			if !hasAny(args, "-c") {
				return name
			}
		case isInterpreter(base):
			if !hasAny(args, "-c", "-m", "-e", "-E", "-pe", "-ne", "-p", "-n", "--eval", "--print", "-r", "-Command") {
				return name
			}
		}
	}
	return ""
}

func hasAny(args []string, flags ...string) bool {
	for _, a := range args {
		for _, f := range flags {
			if a == f {
				return true
			}
		}
	}
	return false
}

// endpoints returns the hosts (with port) a line names: URL hosts and
// IPv4 literals.
func endpoints(line string) []string {
	var out []string
	for _, u := range reURL.Get().FindAllString(line, -1) {
		p, err := url.Parse(strings.TrimRight(u, ".,;:"))
		if err != nil || p.Host == "" || strings.ContainsAny(p.Host, "{}$%") {
			continue // templates such as https://{host}/
		}
		// Parse decodes %XX in the host: %65vil.example is reported as
		// evil.example, and bytes that are not UTF-8 are replaced.
		out = append(out, p.Scheme+"://"+strings.ToValidUTF8(p.Host, "\uFFFD"))
	}
	for _, m := range reIPv4.Get().FindAllStringSubmatch(line, -1) {
		ip := m[2] + m[6]
		if strings.HasPrefix(ip, "0.") || strings.Contains(line, "://"+ip) {
			continue
		}
		out = append(out, ip)
	}
	return out
}

// reason formats a finding reason with an excerpt of the match, in
// backquotes, at most 60 bytes.
func reason(format string, match string) string {
	m := strings.TrimSpace(match)
	m = strings.TrimPrefix(m, "expanduser(")
	m = strings.Trim(m, `"'`)
	return fmt.Sprintf(format, "`"+truncate(m, 60)+"`")
}

// Saved downloads run on the same line.
var (
	reSavedDownload = &lazyre.Regexp{Expr: `(?i)\b(curl|wget)\b[^|;&]*?(?:\s(?:-[a-zA-Z]*[oO]|--output|--output-document)[\s=]*|>\s*)([^\s;&|<>]+)`}
	reRunPrefix     = &lazyre.Regexp{Expr: `^\s*(?:sudo\s+(?:-\S+\s+)*)?(?:(?:ba|z|k|da)?sh|source|\.|python[\d.]*|perl|ruby|node|php|pwsh|deno|bun)\s+(?:-\S+\s+)*$`}
)

// downloadThenRun returns the file that line saves a download to and then
// runs (as "curl -o f URL && sh f" or "... && chmod +x f && ./f"), with no
// checksum or signature check on the line; "" if none. lower is line in
// lower case.
func downloadThenRun(line, lower string) string {
	if !strings.Contains(lower, "curl") && !strings.Contains(lower, "wget") {
		return "" // reSavedDownload needs one
	}
	if containsAny(lower, "sha256sum", "sha512sum", "shasum", "sha1sum", "md5sum", "gpg ", "gpgv", "cosign", "minisign", "signify", "openssl dgst") {
		return ""
	}
	for _, m := range reSavedDownload.Get().FindAllStringSubmatchIndex(line, -1) {
		f := line[m[4]:m[5]]
		if f == "-" || f == "/dev/null" || strings.HasPrefix(f, "-") {
			continue
		}
		rest := line[m[1]:]
		base := path.Base(f)
		for i := 0; i < len(rest); {
			j := strings.Index(rest[i:], base)
			if j < 0 {
				break
			}
			j += i
			// The path as a word, run directly (./f, /tmp/f) or by an
			// interpreter or shell just before it.
			start := strings.LastIndexAny(rest[:j], " \t;&|(") + 1
			word := rest[start : j+len(base)]
			end := j + len(base)
			if end == len(rest) || strings.ContainsRune(" \t;&|)", rune(rest[end])) {
				same := path.Clean(word) == path.Clean(f) || path.Base(word) == base && strings.HasSuffix(f, "/"+path.Clean(word))
				seg := rest[:start]
				seg = seg[strings.LastIndexAny(seg, ";&|")+1:] // the command the word is in
				if same && (strings.Contains(word, "/") && reCommandStart(rest[:start]) || reRunPrefix.Get().MatchString(seg)) {
					return f
				}
			}
			i = j + 1
		}
	}
	return ""
}

// reCommandStart reports whether before (the text before a word) ends
// where a command starts: after &&, ||, ; or |, or a sudo.
func reCommandStart(before string) bool {
	t := strings.TrimRight(before, " \t")
	t = strings.TrimSuffix(t, "sudo")
	t = strings.TrimRight(t, " \t")
	return t == "" || strings.HasSuffix(t, "&&") || strings.HasSuffix(t, "||") || strings.HasSuffix(t, ";") || strings.HasSuffix(t, "|")
}
