#!/usr/bin/env bash
# The release rehearsal (RELEASING.md without the upload), then the reproducibility check. From a copy of the tree:
#  1. set a release version as a maintainer does (versions:set), make a throw-away signing key (gnupg), build the
#     release profile: target/central-bundle.zip;
#  2. check the bundle: each published artifact's POM (with the metadata Central requires), jar, -sources.jar,
#     -javadoc.jar and SBOM, each with a valid .asc and matching .md5/.sha1; nothing else (no test module, no SNAPSHOT);
#  3. build the same tree again in a second copy and compare every published jar byte for byte (outputTimestamp).
# Needs gpg (.ci/run installs gnupg). Prints one closing line: "release-check: N passed, M failed".
set -euo pipefail
check_started=$SECONDS
root="$(cd "$(dirname "$0")/.." && pwd)"
version="${RELEASE_CHECK_VERSION:-0.1.0}"
published=(plans tenant-resolution limiter-filter limiter-redis quotagate-spring-boot-starter quotagate-client)
work="$(mktemp -d /tmp/quotagate-release-check.XXXXXX)"
echo "work: $work"
passed=0; failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "release-check: FAILED: $*"; }

copy_tree() { # the working tree as it is (uncommitted changes too), without build output
  mkdir -p "$1"
  (cd "$root" && tar --exclude=./.git --exclude='*/target' --exclude=./target -cf - .) | tar -xf - -C "$1"
}
set_version() {
  (cd "$1" && mvn -B -q versions:set -DnewVersion="$version" -DprocessAllModules=true -DgenerateBackupPoms=false)
}

# 1. the release build, signed with a key made here and thrown away with $work
copy_tree "$work/a"
set_version "$work/a"
export GNUPGHOME="$work/gnupg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key 'quotagate release check <release-check@quotagate.invalid>' ed25519 sign 1d
key="$(gpg --batch --list-secret-keys --with-colons | awk -F: '/^fpr/ { print $10; exit }')"
start=$SECONDS
(cd "$work/a" && mvn -B -q -Prelease deploy -pl release-it -am -DskipTests -Dgpg.keyname="$key")
echo "release-check: release build $((SECONDS - start)) s"
bundle="$work/a/target/central-bundle.zip"
[ -f "$bundle" ] || { echo "release-check: FAILED: no $bundle"; echo "release-check: 0 passed, 1 failed"; exit 1; }

# 2. the bundle's contents
mkdir "$work/bundle" && (cd "$work/bundle" && unzip -q "$bundle")
base="$work/bundle/io/quotagate"
check_file() { # the file, its signature and its checksums
  local f="$1"
  [ -f "$f" ] || { bad "missing ${f#"$work"/bundle/}"; return; }
  if gpg --batch --quiet --verify "$f.asc" "$f" 2>/dev/null; then ok; else bad "no valid signature for ${f#"$work"/bundle/}"; fi
  for sum in md5 sha1; do
    if [ -f "$f.$sum" ] && [ "$(cut -d' ' -f1 < "$f.$sum")" = "$("${sum}sum" "$f" | cut -d' ' -f1)" ]; then ok
    else bad "missing or wrong ${f#"$work"/bundle/}.$sum"; fi
  done
}
check_pom() { # what Central requires of a POM
  local pom="$1"
  check_file "$pom"
  for element in '<name>' '<description>' '<url>' '<license>' '<developer>' '<scm>' '<connection>'; do
    if grep -q "$element" "$pom" 2>/dev/null; then ok; else bad "${pom#"$work"/bundle/} has no $element"; fi
  done
}
for a in quotagate-parent quotagate-bom; do check_pom "$base/$a/$version/$a-$version.pom"; done
for a in "${published[@]}"; do
  d="$base/$a/$version"
  check_pom "$d/$a-$version.pom"
  for f in "$a-$version.jar" "$a-$version-sources.jar" "$a-$version-javadoc.jar" \
           "$a-$version-cyclonedx.json" "$a-$version-cyclonedx.xml"; do
    check_file "$d/$f"
  done
  if unzip -p "$d/$a-$version.jar" META-INF/MANIFEST.MF 2>/dev/null | grep -q '^Automatic-Module-Name: io\.quotagate'; then ok
  else bad "$a's jar has no Automatic-Module-Name"; fi
done
expected="$(printf '%s\n' quotagate-parent quotagate-bom "${published[@]}" | sort)"
found="$(ls "$base" | sort)"
if [ "$found" = "$expected" ]; then ok; else bad "the bundle holds $(echo $found), not $(echo $expected)"; fi
if unzip -l "$bundle" | grep -q -e SNAPSHOT -e maven-metadata; then bad "SNAPSHOT or maven-metadata files in the bundle"; else ok; fi

# 3. reproducible: a second build of the same tree gives the same bytes
copy_tree "$work/b"
set_version "$work/b"
start=$SECONDS
(cd "$work/b" && mvn -B -q package -pl release-it -am -DskipTests)
echo "release-check: second build $((SECONDS - start)) s"
for a in "${published[@]}"; do
  module="$a"
  case "$a" in quotagate-spring-boot-starter) module=spring-boot-starter ;; esac
  for f in "$a-$version.jar" "$a-$version-sources.jar" "$a-$version-javadoc.jar"; do
    one="$work/a/$module/target/$f"; two="$work/b/$module/target/$f"
    if [ -f "$one" ] && [ -f "$two" ] && cmp -s "$one" "$two"; then ok
    else bad "$module/target/$f differs between two builds (or is missing): $(sha256sum "$one" "$two" 2>&1 | tr '\n' ' ')"; fi
  done
done

echo "release-check: release rehearsal and reproducibility check: $((SECONDS - check_started)) s"
if [ -n "${QUOTAGATE_CI_ELAPSED:-}" ]; then echo "ci: all of .ci/run: $((QUOTAGATE_CI_ELAPSED + SECONDS)) s"; fi
echo "release-check: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
