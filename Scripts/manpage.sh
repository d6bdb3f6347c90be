#!/bin/sh
# Writes the mockserver(1) man page (roff) to standard output, generated from `BINARY --help` and
# `BINARY --version`, so the page never disagrees with the program. Usage: manpage.sh BINARY
set -e
binary=${1:?usage: manpage.sh BINARY}
version=$("$binary" --version | sed 's/^mockserver //')
cat <<HEAD
.TH MOCKSERVER 1 "" "mockserver $version" "User Commands"
.SH NAME
mockserver \\- a local mock API server for contract testing (WireMock-compatible stubs and admin API)
.SH DESCRIPTION
The text below is
.B mockserver \\-\\-help
verbatim. Documentation: docs/ in the source repository (cli.md, admin-api.md, fixtures.md).
.PP
.nf
HEAD
# Roff: backslashes doubled; a line starting with . or ' would be a request, so it is escaped with \&.
"$binary" --help | sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'
printf '.fi\n'
