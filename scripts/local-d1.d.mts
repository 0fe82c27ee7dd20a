export const LOCAL_D1_DIR: string;
export function localMigrationsCurrent(root: string): Promise<boolean>;
