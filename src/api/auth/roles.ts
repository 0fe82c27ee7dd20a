export const ROLES = ["read", "operate", "admin"] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { read: 0, operate: 1, admin: 2 };

export function roleAllows(held: Role, needed: Role): boolean {
	return RANK[held] >= RANK[needed];
}

export function isRole(value: string): value is Role {
	return (ROLES as readonly string[]).includes(value);
}
