#!/usr/bin/env bash
# The layers of src/ read one way: each folder includes only its own headers and those of
# the folders below it (LAYERS). An include names its folder ("model/model.h") unless the
# header is in the including file's own folder. Prints each crossing and exits 1 when
# there is one; `make lint` runs it, and `make test` through checks/layers.
#   tools/layers.sh [SRC_DIR]
set -u
src=${1:-src}
# folder: the folders it may include (besides itself); system headers are not checked
declare -A LAYERS=(
    [cuda]=""
    [common]=""
    [shim]="common cuda"
    [unwind_lib]=""
    [torch_bridge]="cuda"
    [symbols]="common"
    [model]="symbols common"
    [report]="model symbols common"
    [launch]="common"
    [console]="report model symbols launch common"
    [cli]="console report model symbols launch common"
)
bad=0
for dir in "$src"/*/; do
    folder=$(basename "$dir")
    if [ -z "${LAYERS[$folder]+set}" ]; then
        echo "$dir: a folder tools/layers.sh does not know: give it its layer"
        bad=1
        continue
    fi
    allowed=" $folder ${LAYERS[$folder]} "
    while IFS=: read -r file line text; do
        inc=$(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' <<<"$text")
        [ -n "$inc" ] || continue
        case $inc in
        */*) target=${inc%%/*} ;;
        *)
            [ -e "$dir/$inc" ] && continue
            [ -e "include/$inc" ] && continue # the public header (culeak.h)
            echo "$file:$line: \"$inc\" is not in $folder/: name its folder (\"folder/$inc\")"
            bad=1
            continue
            ;;
        esac
        if [ "$target" = ".." ] || [ ! -d "$src/$target" ]; then
            echo "$file:$line: \"$inc\": include from src/ by folder (\"folder/header.h\")"
            bad=1
        elif [[ $allowed != *" $target "* ]]; then
            echo "$file:$line: $folder/ includes $target/ (\"$inc\"): $folder/ may include only:${LAYERS[$folder]:- nothing below it}"
            bad=1
        fi
    done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$dir"* /dev/null | grep -v '^/dev/null')
done
[ "$bad" -eq 0 ] && echo "layers: ok"
exit "$bad"
