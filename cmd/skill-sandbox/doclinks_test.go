package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline Markdown link or image and captures its target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// mdCodeSpan matches an inline code span, whose text is never a link.
var mdCodeSpan = regexp.MustCompile("`[^`]*`")

// mdScheme matches a target with a URL scheme (https:, mailto:), which is
// not a file in the repository.
var mdScheme = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)

// headingSlug is the anchor GitHub gives a heading: lower case, every
// character but letters, digits, spaces, hyphens and underscores dropped,
// spaces turned into hyphens.
func headingSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdScan returns a Markdown file's heading anchors and its link targets
// (with their line numbers), skipping fenced code blocks and code spans.
func mdScan(text string) (anchors map[string]bool, links map[int][]string) {
	anchors = map[string]bool{}
	links = map[int][]string{}
	seen := map[string]int{}
	fence := ""
	for i, line := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if h := strings.TrimLeft(line, "#"); len(h) < len(line) && len(line)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			slug := headingSlug(h)
			// GitHub numbers a repeated heading's anchor: x, x-1, x-2.
			if n := seen[slug]; n > 0 {
				anchors[slug+"-"+strconv.Itoa(n)] = true
			} else {
				anchors[slug] = true
			}
			seen[slug]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(mdCodeSpan.ReplaceAllString(line, ""), -1) {
			links[i+1] = append(links[i+1], m[1])
		}
	}
	return anchors, links
}

func TestHeadingSlug(t *testing.T) {
	for _, tc := range []struct{ heading, want string }{
		{"Quick start", "quick-start"},
		{"AppArmor (Ubuntu 23.10 and later)", "apparmor-ubuntu-2310-and-later"},
		{"Per-run cgroup (layer `cgroup`)", "per-run-cgroup-layer-cgroup"},
		{"What `--allow-degraded` may skip, and what it may not", "what---allow-degraded-may-skip-and-what-it-may-not"},
		{"The sandbox's root", "the-sandboxs-root"},
		{"Linux: Ubuntu's AppArmor restriction", "linux-ubuntus-apparmor-restriction"},
	} {
		if got := headingSlug(tc.heading); got != tc.want {
			t.Errorf("headingSlug(%q) = %q, want %q", tc.heading, got, tc.want)
		}
	}
}

func TestMdScan(t *testing.T) {
	text := "# Top\n## Top\nsee [a](a.md#x) and `[b](b.md)`\n```\n[c](c.md)\n## Fenced\n```\n[d](https://example.com)\n"
	anchors, links := mdScan(text)
	for _, a := range []string{"top", "top-1"} {
		if !anchors[a] {
			t.Errorf("anchor %q missing from %v", a, anchors)
		}
	}
	if anchors["fenced"] {
		t.Errorf("a heading inside a code fence counted: %v", anchors)
	}
	if got := links[3]; len(got) != 1 || got[0] != "a.md#x" {
		t.Errorf("line 3 links = %q, want [a.md#x] (the code span's skipped)", got)
	}
	if got := links[5]; len(got) != 0 {
		t.Errorf("a link inside a code fence counted: %q", got)
	}
	if got := links[8]; len(got) != 1 {
		t.Errorf("line 8 links = %q, want the URL", got)
	}
}

// TestDocLinks checks that every relative link in README.md and docs/*.md
// names a file or folder of the repository and, for a Markdown file, one of
// its headings when it has a #fragment.
func TestDocLinks(t *testing.T) {
	root := filepath.Join("..", "..")
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{filepath.Join(root, "README.md")}, files...)
	if len(files) < 2 {
		t.Fatalf("no docs/*.md found next to %s", files[0])
	}
	anchorsOf := map[string]map[string]bool{}
	anchors := func(path string) (map[string]bool, error) {
		if a, ok := anchorsOf[path]; ok {
			return a, nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		a, _ := mdScan(string(b))
		anchorsOf[path] = a
		return a, nil
	}
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		_, links := mdScan(string(b))
		for line, targets := range links {
			for _, target := range targets {
				if mdScheme.MatchString(target) {
					continue
				}
				checked++
				path, frag, _ := strings.Cut(target, "#")
				dest := file
				if path != "" {
					dest = filepath.Join(filepath.Dir(file), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						t.Errorf("%s:%d: link %q: %v", file, line, target, err)
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				a, err := anchors(dest)
				if err != nil {
					t.Errorf("%s:%d: link %q: %v", file, line, target, err)
					continue
				}
				if !a[frag] {
					t.Errorf("%s:%d: link %q: no heading with anchor #%s in %s", file, line, target, frag, dest)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found: the scan is broken")
	}
}
