package cli

var newGenerateCmd = notYet("generate", "Generate Go, Java and Python producer and consumer code")
