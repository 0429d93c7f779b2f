//go:build !linux && !darwin

package grants

import (
	"errors"
	"io/fs"
	"os"
)

// Mkdirs creates the folders of missing (parents first), one mkdir each,
// and returns those it created, also on error. The sandbox runs as the
// caller here: there is no identity to give the folder to (uid, gid).
func Mkdirs(missing []string, uid, gid int) ([]string, error) {
	var made []string
	for _, d := range missing {
		err := os.Mkdir(d, 0o755)
		switch {
		case err == nil:
			made = append(made, d)
		case errors.Is(err, fs.ErrExist):
			if st, serr := os.Stat(d); serr != nil || !st.IsDir() {
				return made, err
			}
		default:
			return made, err
		}
	}
	return made, nil
}
