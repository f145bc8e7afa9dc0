# Sourced by the bench scripts that print figures: `machine` prints the CPU the figures come from
# (model name, family and model from /proc/cpuinfo, and the cores this process may use), e.g.
# "AMD EPYC, family 25 model 17, 2 cores". README and docs/performance.md quote figures with it.
cpuinfo_field() { grep -m1 "^$1[[:space:]]*:" /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'; }
machine() {
  echo "$(cpuinfo_field 'model name'), family $(cpuinfo_field 'cpu family')" \
       "model $(cpuinfo_field model), $(nproc) cores"
}
