package cli

var newRegistryCmd = notYet("registry", "Run or talk to the schema registry")
