module foxbench/targets/backend-call/go-nethttp

go 1.22
