/**
 * A webhook tool gated by approval, aimed at the TEST_TICKETS_URL secret: a run that calls it waits
 * in approval_pending, which keeps it under way while a test acts on the agent.
 */
export const ticketTool = {
	type: "webhook",
	name: "create_ticket",
	description: "Create a ticket.",
	url_secret: "TEST_TICKETS_URL",
	requires_approval: true,
	input_schema: { type: "object", properties: { title: { type: "string" } }, required: ["title"] },
};
