/**
 * The scripts `drover completion <shell>` prints. Each asks `drover __complete <shell> -- <words…>
 * <current word>` at every Tab, so completion knows the commands and options of the drover on PATH,
 * and the agents, jobs and incidents of the server DROVER_URL names. The answer's last line is a
 * directive: `:1` when the shell may offer file names instead (`apply <file>`, an option's free
 * value), `:0` when not.
 */
export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

// Written for bash 3.2 too (macOS's): no negative indexes, compopt only where it exists.
const BASH = `# drover completion for bash. Load it in ~/.bashrc:  source <(drover completion bash)
_drover_complete() {
	local cur=\${COMP_WORDS[COMP_CWORD]} IFS=$'\\n' out directive last
	out=($(drover __complete bash -- "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur" 2>/dev/null))
	last=$((\${#out[@]} - 1))
	directive=\${out[$last]}
	unset "out[$last]"
	COMPREPLY=($(compgen -W "\${out[*]}" -- "$cur"))
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
