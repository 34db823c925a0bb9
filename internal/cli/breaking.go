package cli

var newBreakingCmd = notYet("breaking", "Check a contract change for wire, JSON and contract breaks")
