
set edit:completion:arg-completer[mf] = { |@words|
    var index = (count $words)
    set index = (- $index 1)

    put (env _CLAP_IFS="\n" _CLAP_COMPLETE_INDEX=(to-string $index) MF_COMPLETE="elvish" mf -- $@words) | to-lines
}

