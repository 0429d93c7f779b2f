package serve

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// errUnsafePath marks an artifact path refused because it leaves the
// execution's folder or goes through a symbolic link.
var errUnsafePath = errors.New("unsafe artifact path")

// errNotRegular marks an artifact that is not a regular file.
var errNotRegular = errors.New("not a regular file")

func (s *Server) getExecution(w http.ResponseWriter, r *http.Request, c *caller) {
	e := c.tenant.get(r.PathValue("id"))
	if e == nil {
		writeProblem(w, r, http.StatusNotFound, ProblemNotFound, "no such execution")
		return
	}
	writeJSON(w, http.StatusOK, e.view())
}

// getArtifact sends one file a finished run created or changed in its
// folder. Only the files the run's artifacts list names are served, and
// each is opened below the folder without following any symbolic link
// (openat2 on Linux), so neither a path with ".." nor a link the script
// left can reach another file.
func (s *Server) getArtifact(w http.ResponseWriter, r *http.Request, c *caller) {
	e := c.tenant.get(r.PathValue("id"))
	if e == nil {
		writeProblem(w, r, http.StatusNotFound, ProblemNotFound, "no such execution")
		return
	}
	rel := r.PathValue("path")
	if !e.artifactFile(rel) {
		writeProblem(w, r, http.StatusNotFound, ProblemNotFound, "no such artifact: only files the run created or changed in its folder are served")
		return
	}
	f, size, err := openArtifact(e.dir, rel)
	switch {
	case errors.Is(err, errUnsafePath), errors.Is(err, errNotRegular):
		s.log().Warn("artifact refused", "execution", e.id, "tenant", e.tenant, "error", err.Error())
		writeProblem(w, r, http.StatusForbidden, ProblemUnsafePath, err.Error())
		return
	case err != nil:
		writeProblem(w, r, http.StatusNotFound, ProblemNotFound, "the artifact is gone: "+err.Error())
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Disposition", "attachment")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		io.Copy(w, io.LimitReader(f, size))
	}
}

// readArtifact reads the artifact rel of the folder dir, at most max
// bytes.
func readArtifact(dir, rel string, max int64) ([]byte, error) {
	f, size, err := openArtifact(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if size > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", rel, max)
	}
	return io.ReadAll(io.LimitReader(f, max))
}
