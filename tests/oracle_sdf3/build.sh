#!/bin/sh
# Build SDF3's sdf3analysis as a test oracle, outside the repository.
#   tests/oracle_sdf3/build.sh [WORKDIR]        (default WORKDIR: /tmp/sdf3-build)
# Gets the public sources (github.com/rhishi/SDF3), compiles base/, sdf/ and csdf/ with the
# flags this 2009 code needs on a current g++, and links in WORKDIR:
#   sdf3analysis          as distributed (prints 6 significant digits)
#   sdf3analysis-precise  the same with the throughput (of --algo throughput and of each
#                         point of --algo buffersize) printed to 17 digits, made by two
#                         one-line edits of the tool's source in WORKDIR (not in the repo)
#   sdf3generate          SDF3's random SDF graph generator (--settings FILE, whose
#                         <settings type="generate"> element under <sdf3 type="sdf"> it reads)
#   sdf3analysis-csdf, sdf3analysis-csdf-precise, sdf3generate-csdf
#                         the same for cyclo-static graphs (its generator reads
#                         <settings type="none"> under <sdf3 type="csdf">, with
#                         <graph period="N"> the number of phases)
# Needs: git, g++, libxml2-dev (apt-get install -y g++ libxml2-dev; xmllint is in
# libxml2-utils).  Nothing of SDF3 is copied into this repository.
set -e
WORK=${1:-/tmp/sdf3-build}
SRC=$WORK/sdf3
mkdir -p "$WORK"
[ -d "$SRC" ] || git clone https://github.com/rhishi/SDF3 "$SRC"
echo "SDF3 commit: $(git -C "$SRC" rev-parse HEAD)"
FLAGS="-std=gnu++98 -fpermissive -DU_SHOW_CPLUSPLUS_API=0 -O2 -w -D_GNU_SOURCE -D_LINUX_ \
-I/usr/include/libxml2 -I$SRC -I$WORK"
OBJ=$WORK/obj
mkdir -p "$OBJ"
cd "$SRC"
# csdf/analysis/statespace does not compile and no tool uses it.
find base sdf csdf -name '*.cc' -not -path '*/tools/*' -not -path 'csdf/analysis/statespace/*' | \
    xargs -P "$(nproc)" -I{} sh -c "g++ $FLAGS -c {} -o $OBJ/\$(echo {} | tr / _).o"
# tools MODULE SUFFIX: sdf3analysis (stock and precise) and sdf3generate of a module
tools() {
    TOOL=$1/tools/sdf3analysis
    sed -e 's|out << "thr(" << g->getName() << ") = " << thr << endl;|out.precision(17); &|' \
        -e 's|out << p->thr;|out.precision(17); &|' \
        $TOOL/sdf3analysis.cc > $TOOL/sdf3analysis_precise.cc
    g++ $FLAGS $TOOL/sdf3analysis.cc "$OBJ"/*.o -o "$WORK/sdf3analysis$2" -lxml2
    g++ $FLAGS $TOOL/sdf3analysis_precise.cc "$OBJ"/*.o -o "$WORK/sdf3analysis$2-precise" -lxml2
    g++ $FLAGS $1/tools/sdf3generate/sdf3generate.cc "$OBJ"/*.o -o "$WORK/sdf3generate$2" -lxml2
}
tools sdf ""
tools csdf -csdf
# libxml2 rejects sdf3-sdf.xsd as it is (the content model of <network>, an architecture
# element, is not deterministic); dropping its third, redundant alternative lets xmllint
# validate application graphs.
sed '240,242d' sdf/xsd/sdf3-sdf.xsd > "$WORK/sdf3-sdf-deterministic.xsd"
echo "built in $WORK: sdf3analysis sdf3analysis-precise sdf3generate sdf3analysis-csdf sdf3analysis-csdf-precise sdf3generate-csdf sdf3-sdf-deterministic.xsd"
