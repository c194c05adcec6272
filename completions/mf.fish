complete --keep-order --exclusive --command mf --arguments "(MF_COMPLETE=fish mf -- (commandline --current-process --tokenize --cut-at-cursor) (commandline --current-token))"
