import { DurableObject } from "cloudflare:workers";
export class AgentDO extends DurableObject<Env> {}
