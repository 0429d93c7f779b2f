package serve

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/skill-sandbox/skill-sandbox/internal/jsonkeys"
	"github.com/skill-sandbox/skill-sandbox/policy"
)

// errUsage marks a request refused for its content: 400, and a record
// with error_kind "usage".
var errUsage = errors.New("invalid request")

// executionRequest is the body of POST /v1/executions.
type executionRequest struct {
	Skill  string   `json:"skill"`
	Script string   `json:"script"`
	Args   []string `json:"args"`
	// Input is any JSON value, written to the script's stdin; Stdin is
	// text written there instead. At most one of them.
	Input          json.RawMessage `json:"input"`
	Stdin          *string         `json:"stdin"`
	Files          []inputFile     `json:"files"`
	TimeoutSeconds *float64        `json:"timeout_seconds"`
}

// inputFile is a file put in the execution's folder before the run.
type inputFile struct {
	Path          string `json:"path"`
	ContentBase64 string `json:"content_base64"`
	data          []byte
}

// maxInputFiles bounds the files of one request.
const maxInputFiles = 1000

// Bounds of a request's script and arguments. An execution keeps them in
// memory for as long as it is kept (--keep, --keep-runs per tenant), so
// only the body size bounded them before: 30 MB of arguments a request,
// which exec would refuse anyway (Linux takes 128 KiB per argument and
// about 2 MiB in all), kept 1000 times. Large inputs go in "input",
// "stdin" or "files", which are not kept.
const (
	maxArgs      = 1024
	maxArgsBytes = 128 << 10
	maxScriptLen = 4096
)

// readRequest reads and checks the body of POST /v1/executions. The body
// is bounded by max bytes (http.MaxBytesReader: a larger one is refused
// as it arrives, never held whole).
func readRequest(w http.ResponseWriter, r *http.Request, max int64) (*executionRequest, int, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, http.StatusUnsupportedMediaType, fmt.Errorf("%w: the body must be application/json, got %q", errUsage, ct)
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, http.StatusRequestEntityTooLarge, fmt.Errorf("%w: the body is larger than %d bytes", errUsage, max)
	}
	if err != nil {
		return nil, http.StatusBadRequest, fmt.Errorf("%w: reading the body: %v", errUsage, err)
	}
	req, err := parseRequest(body)
	if err != nil {
		return nil, http.StatusBadRequest, err
	}
	return req, 0, nil
}

// parseRequest decodes and checks a request body: one JSON object, no
// key twice (in any case), no unknown key, relative file paths that stay
// in the folder, base64 contents.
func parseRequest(body []byte) (*executionRequest, error) {
	if err := jsonkeys.Check(body); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	var req executionRequest
	if err := dec.Decode(&req); err != nil {
		return nil, fmt.Errorf("%w: %v", errUsage, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON object", errUsage)
	}
	switch {
	case req.Skill == "":
		return nil, fmt.Errorf(`%w: "skill" is required`, errUsage)
	case req.Input != nil && req.Stdin != nil:
		return nil, fmt.Errorf(`%w: give "input" or "stdin", not both`, errUsage)
	case len(req.Files) > maxInputFiles:
		return nil, fmt.Errorf(`%w: more than %d "files"`, errUsage, maxInputFiles)
	case len(req.Script) > maxScriptLen:
		return nil, fmt.Errorf(`%w: "script" is longer than %d bytes`, errUsage, maxScriptLen)
	case len(req.Args) > maxArgs:
		return nil, fmt.Errorf(`%w: more than %d "args"`, errUsage, maxArgs)
	}
	n := 0
	for _, a := range req.Args {
		n += len(a)
	}
	if n > maxArgsBytes {
		return nil, fmt.Errorf(`%w: "args" hold %d bytes, more than %d (give large inputs in "input", "stdin" or "files")`, errUsage, n, maxArgsBytes)
	}
	seen := map[string]bool{}
	for i := range req.Files {
		f := &req.Files[i]
		if err := checkInputPath(f.Path); err != nil {
			return nil, fmt.Errorf("%w: files[%d]: %v", errUsage, i, err)
		}
		if seen[f.Path] {
			return nil, fmt.Errorf("%w: files[%d]: %q is given twice", errUsage, i, f.Path)
		}
		seen[f.Path] = true
		data, err := base64.StdEncoding.DecodeString(f.ContentBase64)
		if err != nil {
			return nil, fmt.Errorf("%w: files[%d] (%s): content_base64: %v", errUsage, i, f.Path, err)
		}
		f.data = data
	}
	// A path that is another's folder ("a" and "a/b") cannot be made:
	// refused here, before a pre-started sandbox is reserved for it.
	for i, f := range req.Files {
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if seen[d] {
				return nil, fmt.Errorf("%w: files[%d]: %q lies in %q, which is given as a file", errUsage, i, f.Path, d)
			}
		}
	}
	return &req, nil
}

// checkInputPath refuses an input file path that is not a plain relative
// path inside the folder, or names what the server writes itself.
func checkInputPath(p string) error {
	switch {
	case p == "":
		return errors.New(`"path" is required`)
	case strings.ContainsRune(p, 0) || strings.Contains(p, `\`):
		return fmt.Errorf("path %q holds a NUL or a backslash", p)
	case path.IsAbs(p) || path.Clean(p) != p || p == "." || p == ".." || strings.HasPrefix(p, "../"):
		return fmt.Errorf("path %q must be relative and clean, inside the execution's folder", p)
	case p == OutputFile:
		return fmt.Errorf("path %q is where the script writes its output", p)
	}
	return nil
}

// stdinOf returns the script's stdin: the input JSON, the stdin text, or
// nothing.
func (req *executionRequest) stdinOf() []byte {
	switch {
	case req.Input != nil:
		return req.Input
	case req.Stdin != nil:
		return []byte(*req.Stdin)
	}
	return nil
}

// callTimeout checks a requested time limit against the run's: a request
// may shorten it, never lengthen it.
func callTimeout(sec *float64, limit time.Duration) (time.Duration, error) {
	d, err := policy.CallTimeout(sec, limit)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", errUsage, err)
	}
	return d, nil
}
