module foxbench/targets/go-nethttp

go 1.24
