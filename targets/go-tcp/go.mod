module foxbench/targets/go-tcp

go 1.22
