module ember-samples/go-workload

go 1.19
