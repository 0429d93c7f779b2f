package writefolder

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMake(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		dir     string
		made    bool
		wantErr bool
	}{
		{"new with parents", filepath.Join(base, "a", "b"), true, false},
		{"existing", base, false, false},
		{"under a file", filepath.Join(file, "x"), false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			made, err := Make(tt.dir, "native")
			if made != tt.made || (err != nil) != tt.wantErr {
				t.Fatalf("Make(%s) = %v, %v; want made %v, error %v", tt.dir, made, err, tt.made, tt.wantErr)
			}
			if err == nil {
				if st, err := os.Stat(tt.dir); err != nil || !st.IsDir() {
					t.Fatalf("%s is not a folder after Make: %v", tt.dir, err)
				}
			}
		})
	}
}
