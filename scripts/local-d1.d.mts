export const LOCAL_D1_DIR: string;
export function localMigrationsCurrent(root: string): Promise<boolean>;
export function localD1Files(root: string): string[];
export function recordLocalMigrations(root: string, before: string[]): void;
