# Sourced: debian_mirror prints the Debian archive this machine's apt uses
# (the first URI of an enabled source for a Debian suite that is not a
# security suite), or HV_DEBIAN_MIRROR where it is set; nothing when apt
# names none. The address is the machine's, never the project's.
debian_mirror() {
  if [ -n "${HV_DEBIAN_MIRROR:-}" ]; then echo "$HV_DEBIAN_MIRROR"; return; fi
  {
    # one-line style: deb [options] URI SUITE COMPONENTS...
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      awk '$1 == "deb" { i = 2; if ($i ~ /^\[/) while ($i !~ /\]$/) i++; if ($i ~ /^\[/ || $i ~ /\]$/) i++;
                         if ($(i + 1) !~ /-security$/ && $(i + 2) != "") print $i }'
    # deb822 style: a stanza's URIs and Suites fields
    cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
      awk 'BEGIN { RS = ""; FS = "\n" }
           { uri = ""; suites = ""; enabled = 1
             for (k = 1; k <= NF; k++) {
               if ($k ~ /^URIs:/) { split($k, a, " "); uri = a[2] }
               if ($k ~ /^Suites:/) suites = $k
               if ($k ~ /^Enabled: *no/) enabled = 0 }
             if (enabled && uri != "" && suites !~ /-security/ && suites ~ /(bookworm|trixie|bullseye|sid|stable|testing)/) print uri }'
  } | head -n1
}
