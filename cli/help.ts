import { Help, type HelpConfiguration } from "commander";

/**
 * Help fitted to its width (the terminal's, 80 into a pipe). Commander aligns every description to
 * the longest term and, when that leaves under `minWidthToWrap` (40) columns, wraps none: the top
 * level's `notepad [options] <agent> [action] [key] [value]` left 28, so each command's line ran to
 * 100-330 columns on an 80-column terminal. Here the term column is at most what leaves 40: a longer
 * term stands on its own line, its description wrapped below it at the column.
 */
export function fittedHelp(after: (cmd: import("commander").Command) => string | undefined): HelpConfiguration {
	return {
		formatItem(this: Help, term: string, termWidth: number, description: string, helper: Help): string {
			const room = (this.helpWidth ?? 80) - ITEM_INDENT - SPACER - this.minWidthToWrap;
			const column = Math.max(MIN_TERM_COLUMN, Math.min(termWidth, room));
			if (!description || termWidth <= column) return Help.prototype.formatItem.call(this, term, termWidth, description, helper);
			if (helper.displayWidth(term) <= column) return Help.prototype.formatItem.call(this, term, column, description, helper);
			return `${" ".repeat(ITEM_INDENT)}${term}\n${Help.prototype.formatItem.call(this, "", column, description, helper)}`;
		},
		/** The top level's closing text (the exit codes), wrapped as the rest is. */
		formatHelp(this: Help, cmd, helper): string {
			const text = Help.prototype.formatHelp.call(this, cmd, helper);
			const tail = after(cmd);
			return tail === undefined ? text : `${text}\n${helper.boxWrap(tail, this.helpWidth ?? 80)}\n`;
		},
	};
}

const ITEM_INDENT = 2;
const SPACER = 2;
/** Below this a term column would cut most option names; the 40 columns of description give way first. */
const MIN_TERM_COLUMN = 16;
