package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// AllowDownloads makes the browser of tab save what its pages download
// (a link with a download attribute, a Blob URL among them) into dir under
// the name the page gives, instead of asking where: headless Chromium
// refuses downloads until told where they go (Browser.setDownloadBehavior).
func AllowDownloads(tab context.Context, dir string) error {
	_, err := chromedp.Call(tab, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior:     browser.SetDownloadBehaviorBehaviorAllow,
		DownloadPath: dir,
	})
	if err != nil {
		return fmt.Errorf("allow downloads into %s: %w", dir, err)
	}
	return nil
}

// Downloaded waits, until ctx ends, for the file name to be complete in dir
// and returns its content. Chromium writes a download under a temporary
// name (.crdownload) and renames it when it is done, but it may first
// reserve the final name with an empty file: so the file counts as
// complete once it has content and no temporary file is left in dir
// (seen: a statement read as "" while it was still being written). An
// empty download therefore never completes; the pages make none.
func Downloaded(ctx context.Context, dir, name string) ([]byte, error) {
	path := filepath.Join(dir, name)
	for {
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			pending, gerr := filepath.Glob(filepath.Join(dir, "*.crdownload"))
			if gerr != nil {
				return nil, gerr
			}
			if len(b) > 0 && len(pending) == 0 {
				return b, nil
			}
		case !errors.Is(err, os.ErrNotExist):
			return nil, err
		}
		select {
		case <-ctx.Done():
			var names []string
			if entries, err := os.ReadDir(dir); err == nil {
				for _, e := range entries {
					names = append(names, e.Name())
				}
			}
			return nil, fmt.Errorf("no complete download %s in %s (it holds %q): %w", name, dir, names, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
