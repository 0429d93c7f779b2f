package serve

import (
	"strings"
	"testing"
)

// TestParseRequest: each way a request body can be wrong is refused with
// the reason.
func TestParseRequest(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"no skill", `{"script":"s"}`, `"skill" is required`},
		{"unknown key", `{"skill":"a","version":"1"}`, `unknown field "version"`},
		{"case duplicate", `{"skill":"a","Skill":"b"}`, "Skill"},
		{"trailing data", `{"skill":"a"} {}`, "after top-level value"},
		{"input and stdin", `{"skill":"a","input":{},"stdin":"x"}`, `not both`},
		{"absolute file", `{"skill":"a","files":[{"path":"/etc/passwd","content_base64":""}]}`, "must be relative"},
		{"dotdot file", `{"skill":"a","files":[{"path":"../x","content_base64":""}]}`, "must be relative"},
		{"inner dotdot", `{"skill":"a","files":[{"path":"a/../../x","content_base64":""}]}`, "must be relative"},
		{"unclean", `{"skill":"a","files":[{"path":"a//b","content_base64":""}]}`, "must be relative"},
		{"backslash", `{"skill":"a","files":[{"path":"a\\b","content_base64":""}]}`, "backslash"},
		{"output file", `{"skill":"a","files":[{"path":"output.json","content_base64":""}]}`, "writes its output"},
		{"twice", `{"skill":"a","files":[{"path":"x","content_base64":""},{"path":"x","content_base64":""}]}`, "given twice"},
		{"file and its folder", `{"skill":"a","files":[{"path":"a","content_base64":""},{"path":"a/b/c","content_base64":""}]}`, `"a/b/c" lies in "a", which is given as a file`},
		{"folder first", `{"skill":"a","files":[{"path":"d/e","content_base64":""},{"path":"d","content_base64":""}]}`, `"d/e" lies in "d"`},
		{"bad base64", `{"skill":"a","files":[{"path":"x","content_base64":"!!"}]}`, "content_base64"},
		{"no path", `{"skill":"a","files":[{"content_base64":""}]}`, `"path" is required`},
		{"long script", `{"skill":"a","script":"` + strings.Repeat("s", maxScriptLen+1) + `"}`, `"script" is longer`},
		{"many args", `{"skill":"a","args":[` + strings.Repeat(`"",`, maxArgs) + `""]}`, `more than 1024 "args"`},
		{"large args", `{"skill":"a","args":["` + strings.Repeat("a", 100<<10) + `","` + strings.Repeat("b", 30<<10) + `"]}`, `"args" hold 133120 bytes`},
	} {
		_, err := parseRequest([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one holding %q", c.name, err, c.want)
		}
	}
	req, err := parseRequest([]byte(`{"skill":"a","args":["x"],"input":{"k":[1]},"files":[{"path":"in/a.txt","content_base64":"aGk="}],"timeout_seconds":2}`))
	if err != nil || string(req.stdinOf()) != `{"k":[1]}` || string(req.Files[0].data) != "hi" {
		t.Errorf("good request: %+v %v", req, err)
	}
}

// FuzzParseRequest: no body panics, and every accepted body has a skill
// and input paths inside the folder.
func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"skill":"a","script":"scripts/x.sh","args":["1"],"input":{"k":1},"files":[{"path":"in/a.txt","content_base64":"aGk="}],"timeout_seconds":1.5}`))
	f.Add([]byte(`{"skill":"a","stdin":"text"}`))
	f.Add([]byte(`{"skill":"a","files":[{"path":"./x","content_base64":""}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseRequest(body)
		if err != nil {
			return
		}
		if req.Skill == "" {
			t.Fatal("accepted without a skill")
		}
		for _, fl := range req.Files {
			if checkInputPath(fl.Path) != nil || strings.HasPrefix(fl.Path, "/") || strings.Contains("/"+fl.Path+"/", "/../") {
				t.Fatalf("path %q accepted", fl.Path)
			}
		}
	})
}
