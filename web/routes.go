package web

import (
	"net/url"
	"strings"
)

// The wallet's views and their addresses. The pages route in the browser
// (js/router.js, History API); the server answers every address of a view
// with index.html so that a reload or a deep link lands on the view, and any
// other page address with index.html and status 404, which the pages show as
// their "not found" view. The two tables must agree: TestRoutesAgree loads
// router.js in Chromium and compares them path by path.
//
// The views, by address ({id} is one path segment, a resource id such as
// "Transaction:019…"):
//
//	/                         home           balance, Send and Add funds, last payments
//	/send                     send           the send flow, in steps
//	/activity                 activity       every payment and funding, by status
//	/activity/statement       statement      every change to the balance, with the balance after it; a month as CSV
//	/activity/{id}            payment        one payment, followed live
//	/activity/{id}/receipt    receipt        its receipt
//	/recipients               recipients     external accounts
//	/recipients/new           recipient-new  add one
//	/recipients/{id}          recipient      one of them, with remove
//	/security                 security       sessions, sign-in methods, recovery phrase, ids
//
// Signed out, every view's address shows the sign-in page first and the
// view after sign-in.

// View returns the name of the view at the URL path p ("/activity/…"),
// and false when p is not the address of a view.
func View(p string) (string, bool) {
	if p == "/" {
		return "home", true
	}
	if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
		return "", false
	}
	seg := strings.Split(p[1:], "/")
	for i, s := range seg {
		u, err := url.PathUnescape(s)
		if err != nil || !idLike(u) {
			return "", false
		}
		seg[i] = u
	}
	switch {
	case len(seg) == 1 && seg[0] == "send":
		return "send", true
	case len(seg) == 1 && seg[0] == "activity":
		return "activity", true
	case len(seg) == 2 && seg[0] == "activity" && seg[1] == "statement":
		return "statement", true
	case len(seg) == 2 && seg[0] == "activity":
		return "payment", true
	case len(seg) == 3 && seg[0] == "activity" && seg[2] == "receipt":
		return "receipt", true
	case len(seg) == 1 && seg[0] == "recipients":
		return "recipients", true
	case len(seg) == 2 && seg[0] == "recipients" && seg[1] == "new":
		return "recipient-new", true
	case len(seg) == 2 && seg[0] == "recipients":
		return "recipient", true
	case len(seg) == 1 && seg[0] == "security":
		return "security", true
	}
	return "", false
}

// idLike reports whether s may be a path segment of a view's address: the
// words of the table and resource ids (letters, digits, ':', '-', '_').
func idLike(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == ':', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}
