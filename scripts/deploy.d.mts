export function pendingMigrations(root: string, where: "--remote" | "--local"): string[];
