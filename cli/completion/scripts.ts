/**
 * The scripts `drover completion <shell>` prints. Each asks `drover __complete <shell> -- <words…>
 * <current word>` at every Tab, so completion knows the commands and options of the drover on PATH,
 * and the agents, jobs and incidents of the server DROVER_URL names. The answer's last line is a
 * directive: `:1` when the shell may offer file names instead (`apply <file>`, an option's free
 * value), `:0` when not.
 */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

// Written for bash 3.2 too (macOS's): no negative indexes, no mapfile, compopt only where it exists.
// bash splits the line at COMP_WORDBREAKS (: and = among them), so a URL or --agent=x comes as several
// words: they are joined again where the line has no blank between them. The answer is read line by
// line (an unquoted $( ) would expand a * in a candidate into file names) and given as it is, quoted
// (compgen -W would run a $( ) in a notepad key, which an agent's run may have written), less the
// part of the word before bash's own current word (after a : or =), which bash keeps.
const BASH = `# drover completion for bash. Load it in ~/.bashrc:  source <(drover completion bash)
_drover_complete() {
	local IFS=$'\\n' line=\${COMP_LINE:0:COMP_POINT} word= part directive=:0 i n=-1 cut
	local -a words=() out=()
	line=\${line#"\${line%%[![:blank:]]*}"}
	line=\${line#"\${COMP_WORDS[0]}"}
	for ((i = 1; i <= COMP_CWORD; i++)); do
		word=\${COMP_WORDS[i]}
		if [[ $n -lt 0 || $line == [[:blank:]]* ]]; then
			n=$((n + 1))
			words[n]=
		fi
		line=\${line#"\${line%%[![:blank:]]*}"}
		# The word under the cursor up to the cursor: bash replaces that much, keeping what follows.
		if [[ $i -eq $COMP_CWORD ]]; then word=$line; fi
		words[n]=\${words[n]}$word
		line=\${line#"$word"}
	done
	part=$word
	# Right after a : or =, bash completes the empty word that follows it.
	if [[ \${#part} -eq 1 && \${COMP_WORDBREAKS-} == *"$part"* ]]; then part=; fi
	cut=$((\${#words[n]} - \${#part}))
	while read -r word; do
		out[\${#out[@]}]=$word
	done < <(drover __complete bash -- "\${words[@]}" 2>/dev/null)
	COMPREPLY=()
	if [[ \${#out[@]} -gt 0 ]]; then
		i=$((\${#out[@]} - 1))
		directive=\${out[i]}
		unset "out[i]"
	fi
	for ((i = 0; i < \${#out[@]}; i++)); do
		word=\${out[i]:cut}
		# Quoted only when the shell would read it otherwise (a space, a *, a $): %q escapes a comma too.
		if [[ $word == *[![:alnum:]_.,:=@%+/-]* ]]; then printf -v word '%q' "$word"; fi
		COMPREPLY[\${#COMPREPLY[@]}]=$word
	done
	if [[ \${#COMPREPLY[@]} -eq 0 && $directive == ":1" ]] && type compopt >/dev/null 2>&1; then
		compopt -o default
	fi
}
complete -F _drover_complete drover
`;

const ZSH = `#compdef drover
# drover completion for zsh. Load it in ~/.zshrc, after compinit:  source <(drover completion zsh)
_drover() {
	local -a lines candidates
	lines=("\${(@f)$(drover __complete zsh -- "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null)}")
	candidates=("\${(@)lines[1,-2]}")
	if (( \${#candidates} )); then
		_describe drover candidates
	elif [[ \${lines[-1]} == ":1" ]]; then
		_files
	fi
}
compdef _drover drover
`;

const FISH = `# drover completion for fish. Load it in ~/.config/fish/config.fish:  drover completion fish | source
function __drover_complete
	set -l words (commandline -opc)
	set -e words[1]
	set -l out (drover __complete fish -- $words (commandline -ct) 2>/dev/null)
	set -l directive $out[-1]
	set -e out[-1]
	if test (count $out) -gt 0
		printf '%s\\n' $out
	else if test "$directive" = ":1"
		__fish_complete_path (commandline -ct)
	end
end
complete -c drover -f -a '(__drover_complete)'
`;

export const SCRIPTS: Record<Shell, string> = { bash: BASH, zsh: ZSH, fish: FISH };

/** One candidate as the shell's script reads it: bash takes the word alone, zsh word:description, fish word<TAB>description. */
export function candidateLine(shell: Shell, value: string, description: string | undefined): string {
	// A line break would make two candidates of one; a tab, two fields in fish.
	const one = (s: string) => s.replace(/[\r\n\t]+/g, " ");
	if (shell === "bash" || !description) return shell === "zsh" ? one(value).replace(/:/g, "\\:") : one(value);
	return shell === "zsh" ? `${one(value).replace(/:/g, "\\:")}:${one(description)}` : `${one(value)}\t${one(description)}`;
}
