package validate

import (
	"net/url"
	"path"
	"strings"
	"unicode/utf8"
)

// checkBody warns about a long body and about referenced files that do not
// exist in the skill folder: the targets of Markdown links and images
// "[text](target)", and bare relative paths into the skill's own folders
// such as `scripts/fill_form.py` or references/api.md (mdLinkTargets and
// barePathRanges in match.go).
func (c *checker) checkBody(md string, fm *Frontmatter) {
	body := strings.TrimRight(fm.Body, " \t\r\n")
	if n := strings.Count(body, "\n") + 1; body != "" && n >= MaxBodyLines {
		c.warnf(md, fm.EndLine+1, 0, "", "SKILL.md body has %d lines; keep it under %d and move details to references/", n, MaxBodyLines)
	}
	reported := map[string]bool{}
	// Line by line without splitting the body into a slice first.
	for i, rest, more := 0, body, true; more; i++ {
		var l string
		l, rest, more = strings.Cut(rest, "\n")
		lineNo := fm.EndLine + 1 + i
		for _, m := range mdLinkTargets(l) {
			c.checkRef(md, l, lineNo, m[0], l[m[0]:m[1]], true, reported)
		}
		for _, m := range barePathRanges(l) {
			end := m[1]
			if end < len(l) && strings.IndexByte("<{*$", l[end]) >= 0 {
				continue // a placeholder such as scripts/<name>.py
			}
			c.checkRef(md, l, lineNo, m[0], l[m[0]:m[1]], false, reported)
		}
	}
}

// checkRef warns when target, found at byte off of line, names no file in
// the skill folder.
func (c *checker) checkRef(md, line string, lineNo, off int, target string, link bool, reported map[string]bool) {
	if link {
		if strings.Contains(target, ":") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "/") ||
			strings.ContainsAny(target, "{}*$") {
			return // URL, anchor, absolute path or template
		}
	}
	if i := strings.IndexAny(target, "#?"); i >= 0 {
		target = target[:i]
	}
	if link {
		if u, err := url.PathUnescape(target); err == nil {
			target = u
		}
	}
	target = strings.TrimRight(target, ".:!?")
	if target == "" {
		return
	}
	clean := path.Clean(target)
	if clean == "." || reported[clean] {
		return
	}
	col := utf8.RuneCountInString(line[:off]) + 1
	if clean == ".." || strings.HasPrefix(clean, "../") {
		if link {
			reported[clean] = true
			c.warnf(md, lineNo, col, "", "referenced path %s leaves the skill folder", target)
		}
		return
	}
	if !link && !strings.Contains(strings.TrimSuffix(clean, "/"), "/") {
		return
	}
	if _, ok := c.files[clean]; ok {
		return
	}
	reported[clean] = true
	c.warnf(md, lineNo, col, "", "referenced file %s does not exist in the skill folder", target)
}
