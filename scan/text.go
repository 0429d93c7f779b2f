package scan

import (
	"strings"

	"github.com/skill-sandbox/skill-sandbox/internal/lazyre"
)

// text runs the line rules over a text file.
func (r *Result) text(rel string, data []byte, k fileKind) {
	// Most files are ASCII: one look at the whole file spares one per
	// line.
	ascii := isASCII(data)
	src := string(data)
	inFence, fence := false, ""
	first, _, _ := strings.Cut(src, "\n")
	inFront := k.skillMD && strings.TrimSpace(strings.TrimPrefix(first, "\ufeff")) == "---"
	decoded := map[string]bool{} // variables assigned from a decoder
	hosts := map[string]bool{}
	var cont continued // shell continuation lines, for pipe-to-shell
	i := -1
	// The lines of strings.Split, without its slice of them.
	for line := range strings.SplitSeq(src, "\n") {
		i++
		n := i + 1
		line = strings.TrimSuffix(line, "\r")
		add := func(rule string, sev Severity, msg string) {
			r.add(Finding{rule, sev, rel, n, msg})
		}
		lineASCII := ascii || isASCII(line)
		if !lineASCII {
			checkHidden(line, i == 0, func(sev Severity, msg string) { add(RuleHiddenUnicode, sev, msg) })
		}

		trimmed := strings.TrimSpace(line)
		if k.skillMD && inFront {
			if i > 0 && trimmed == "---" {
				inFront = false
			}
		} else if k.markdown {
			switch {
			case !inFence && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")):
				inFence, fence = true, trimmed[:3]
			case inFence && strings.HasPrefix(trimmed, fence):
				inFence = false
			case k.skillMD && !inFence && strings.IndexByte(line, '!') >= 0: // both expressions need a "!"
				if m := reBangInline.Get().FindString(line); m != "" {
					add(RuleLoadTimeCommand, Medium, reason("runs a command when the skill loads: %s", m))
				} else if reBangLine.Get().MatchString(line) && !strings.HasPrefix(trimmed, "![") {
					add(RuleLoadTimeCommand, Medium, reason("runs a command when the skill loads: %s", trimmed))
				}
			}
		}

		// Endpoints on the whole line: a window edge would cut a URL.
		if k.code && (strings.Contains(line, "://") || hasDottedDigits(line)) {
			for _, h := range endpoints(line) {
				if !hosts[h] {
					hosts[h] = true
					add(RuleNetworkEndpoint, Info, "names endpoint "+h)
				}
			}
		}
		before := len(r.Findings)
		lineRules(line, lineASCII, k, decoded, add)
		hit := false
		for _, f := range r.Findings[before:] {
			hit = hit || f.Rule == RulePipeToShell
		}
		if joined, start := cont.add(line, n, hit); joined != "" {
			lower := strings.ToLower(joined)
			if msg := runsDownload(joined, lower, lineHints.mask(lower)); msg != "" {
				r.add(Finding{RulePipeToShell, Critical, rel, start, msg})
			}
		}
	}
}

// lineRules runs the rules that look at one line; ascii says whether
// the line is ASCII. decoded holds the variables assigned from a decoder
// so far in the file.
func lineRules(line string, ascii bool, k fileKind, decoded map[string]bool, add func(string, Severity, string)) {
	// Cheap literal tests keep the regular expressions off most lines.
	// An ASCII line's hints are found folding case on the fly (which is
	// what strings.ToLower does to ASCII); the lower-case copy is made
	// only for the few lines that need it.
	// Outside Markdown only the lists of codeHints are looked at: the
	// others are prose, and finding them costs most of the index's work.
	idx := lineHints
	if !k.markdown {
		idx = codeHints
	}
	var lower string
	var hints uint
	if ascii {
		hints = idx.maskFold(line)
	} else {
		lower = strings.ToLower(line)
		hints = idx.mask(lower)
	}
	lowered := func() string {
		if lower == "" {
			lower = strings.ToLower(line)
		}
		return lower
	}
	injection := func(re *lazyre.Regexp, format string) {
		loc := re.Get().FindStringIndex(line)
		if loc == nil {
			return
		}
		m := line[loc[0]:loc[1]]
		if quotedAttack(line, lowered(), loc) {
			add(RulePromptInjection, Info, reason("quotes an injection phrase where it discusses attacks (check it is an example, not an instruction): %s", m))
			return
		}
		add(RulePromptInjection, High, reason(format, m))
	}
	if k.markdown && hints&hintIgnore != 0 {
		injection(reIgnoreRules, "tells the agent to ignore its instructions: %s")
	}
	if k.markdown && hints&hintHide != 0 {
		injection(reHideFromUser, "keeps actions from the user: %s")
	}
	if k.markdown && hints&hintSendWhere != 0 && hints&hintSendVerb != 0 {
		injection(reSendData, "sends data to a remote address: %s")
	}
	if hints&hintDownload != 0 {
		if msg := runsDownload(line, lowered(), hints); msg != "" {
			add(RulePipeToShell, Critical, msg)
		}
	}

	if hints&hintCredential != 0 {
		if m := reCredential.Get().FindString(line); m != "" {
			add(RuleCredentialRead, High, reason("names a credential location: %s", m))
		}
	}

	decodes := hints&hintDecode != 0
	switch {
	case !decodes && len(decoded) == 0:
	case reShellDecode.Get().MatchString(line) && pipedInto(line, reShellDecode.Get()) != "":
		add(RuleObfuscatedExec, Critical, "decodes a blob and pipes it into "+pipedInto(line, reShellDecode.Get()))
	case reShellDecode.Get().MatchString(line) && reDecodeSubst.Get().MatchString(line):
		add(RuleObfuscatedExec, Critical, reason("runs decoded data: %s", reDecodeSubst.Get().FindString(line)))
	case reDecodeCall.Get().MatchString(line) && reExecCall.Get().MatchString(line):
		add(RuleObfuscatedExec, Critical, reason("executes decoded data: %s", line))
	case len(decoded) > 0 && (reExecCall.Get().MatchString(line) || reShellEval.Get().MatchString(line)):
		for v := range decoded {
			if usesVar(line, v) {
				add(RuleObfuscatedExec, Critical, "executes "+v+", which holds decoded data")
				break
			}
		}
	}
	if decodes {
		if m := reDecodeAssign.Get().FindStringSubmatch(line); m != nil {
			decoded[m[1]] = true
		}
	}

}

// runsDownload describes how line runs downloaded code (piped into a
// shell or interpreter, a process or command substitution, or saved to a
// file that the same line then runs without checking it), or returns "".
// lower is line in lower case, hints lineHints.mask(lower).
func runsDownload(line, lower string, hints uint) string {
	if hints&hintDownload == 0 {
		return ""
	}
	// pipedInto needs a "|" after the download; every branch of
	// reSubstitution one of the literals tested before it.
	if strings.IndexByte(line, '|') >= 0 {
		if name := pipedInto(line, reDownloader.Get()); name != "" {
			return "pipes a download into " + name
		}
	}
	if containsAny(lower, "<(", "$(", "`", "exec", "eval", "iex") {
		if m := reSubstitution.Get().FindString(line); m != "" {
			return reason("runs downloaded code: %s", m)
		}
	}
	if f := downloadThenRun(line, lower); f != "" {
		return "downloads " + f + " and runs it without checking it"
	}
	return ""
}

// continued joins shell continuation lines ("\" at the end) into one
// logical line, so that "curl URL \" then "| bash" is read as one
// command. It is bounded: a logical line ends after 64 physical lines or
// 8 KiB.
type continued struct {
	b     strings.Builder
	start int  // line number of the first physical line
	lines int  // physical lines so far
	hit   bool // a physical line of it already had a pipe-to-shell finding
}

// add takes the physical line n (its own pipe-to-shell finding, if any, in
// hit) and returns the finished logical line and its first line number
// when the continuation ends, else "".
func (c *continued) add(line string, n int, hit bool) (string, int) {
	t := strings.TrimRight(line, " \t")
	more := strings.HasSuffix(t, "\\")
	if c.lines == 0 && !more {
		return "", 0
	}
	if c.lines == 0 {
		c.start, c.hit = n, false
	}
	c.lines++
	c.hit = c.hit || hit
	c.b.WriteString(strings.TrimSuffix(t, "\\"))
	c.b.WriteByte(' ')
	if more && c.lines < 64 && c.b.Len() < 8<<10 {
		return "", 0
	}
	joined, start, skip := c.b.String(), c.start, c.hit
	c.b.Reset()
	c.lines = 0
	if skip {
		return "", 0
	}
	return joined, start
}

// containsAny reports whether s contains any of the substrings.
func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

// isASCII reports whether s has only ASCII bytes. It looks at 8 bytes at
// a time: it runs over every scanned file.
func isASCII[T string | []byte](s T) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := s[i : i+8]
		if (w[0]|w[1]|w[2]|w[3]|w[4]|w[5]|w[6]|w[7])&0x80 != 0 {
			return false
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// hasDottedDigits reports whether s has a digit, a dot and a digit in a
// row, the least an IPv4 literal needs.
func hasDottedDigits(s string) bool {
	// From dot to dot (strings.IndexByte is vectorised), not byte by byte.
	for i := 1; i+1 < len(s); i++ {
		j := strings.IndexByte(s[i:len(s)-1], '.')
		if j < 0 {
			return false
		}
		i += j
		if s[i-1] >= '0' && s[i-1] <= '9' && s[i+1] >= '0' && s[i+1] <= '9' {
			return true
		}
	}
	return false
}

// reShellEval matches shell constructs that run a string as code.
var reShellEval = &lazyre.Regexp{Expr: `\beval\b|\b(ba|z|k|da)?sh\s+-c\b|\|\s*(ba|z|k|da)?sh\b`}

// usesVar reports whether line refers to the variable v as a word, or as
// $v / ${v} in shell.
func usesVar(line, v string) bool {
	for i := 0; ; {
		j := strings.Index(line[i:], v)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(v)
		before := j == 0 || !isWord(line[j-1])
		after := end == len(line) || !isWord(line[end])
		if before && after {
			return true
		}
		i = j + 1
	}
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// attackWords, lowercase, mark a line that talks about attacks.
var attackWords = []string{"inject", "attack", "malicious", "threat", "untrusted", "adversar", "jailbreak", "phishing"}

// quotedAttack reports whether the match at loc of line is inside double
// quotes (straight or curly) or backticks on a line that talks about
// attacks: security guidance quotes injection phrases as examples of
// what to defend against ("any text may carry attacker-authored
// instructions ("ignore previous instructions, ...")"). Both are needed:
// an unquoted phrase, or a quoted one with no talk of attacks, is read
// as an instruction.
func quotedAttack(line, lower string, loc []int) bool {
	if !containsAny(lower, attackWords...) {
		return false
	}
	before, after := line[:loc[0]], line[loc[1]:]
	for _, q := range [][2]string{{`"`, `"`}, {"\u201c", "\u201d"}, {"`", "`"}} {
		open := strings.LastIndex(before, q[0])
		if open < 0 || !strings.Contains(after, q[1]) {
			continue
		}
		// The quote before the match opens one: an even number of
		// straight quotes precede it (curly quotes say which they are).
		if q[0] != q[1] || strings.Count(before[:open], q[0])%2 == 0 {
			return true
		}
	}
	return false
}
