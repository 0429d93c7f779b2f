package serve

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// ProblemTypeBase prefixes the type URI of every problem the server
// answers with: the anchors of docs/serve.md that explain each.
const ProblemTypeBase = "https://github.com/skill-sandbox/skill-sandbox/blob/main/docs/serve.md#problem-"

// Problem types, the part of the type URI after ProblemTypeBase.
const (
	ProblemUnauthorized  = "unauthorized"         // no token, or not a known one
	ProblemNotFound      = "not-found"            // no such route, skill, execution or artifact (for this tenant)
	ProblemBadRequest    = "bad-request"          // the request's JSON or fields are wrong
	ProblemTooLarge      = "too-large"            // the body is larger than the server takes
	ProblemQueueFull     = "queue-full"           // every run slot and queue place is taken
	ProblemDraining      = "draining"             // the server is stopping and takes no new runs
	ProblemNoSpace       = "insufficient-storage" // the work folder has too little free space for the run
	ProblemRefused       = "refused"              // the run was refused (policy, skill, isolation)
	ProblemUnsafePath    = "unsafe-path"          // an artifact path that leaves the folder or goes through a link
	ProblemUnsupportedCT = "unsupported-type"     // a body that is not application/json
)

// problem is an RFC 9457 problem details object.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
}

// writeProblem answers r with an application/problem+json body of the
// given status and type; detail says what was wrong with this request.
func writeProblem(w http.ResponseWriter, r *http.Request, status int, kind, detail string) {
	p := problem{Type: ProblemTypeBase + kind, Title: http.StatusText(status), Status: status, Detail: detail, Instance: r.URL.Path}
	b, err := json.Marshal(p)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Cache-Control", "no-store")
	if status == http.StatusUnauthorized {
		h.Set("WWW-Authenticate", `Bearer realm="skill-sandbox"`)
	}
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeRetryProblem is writeProblem with a Retry-After header.
func writeRetryProblem(w http.ResponseWriter, r *http.Request, status int, kind, detail string, after time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(after.Seconds()))))
	writeProblem(w, r, status, kind, detail)
}

// writeJSON answers with a JSON body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}
