// @ts-check
// ── start: each page's view, and signing in first when there is no token ──
/** @type {Record<string, View>} */
const VIEWS = { fleet: fleetView, jobs: jobsView, job: jobView, runs: runsView, logs: agentLogsView, usage: usageView, incidents: incidentsView };

setInterval(refreshTimes, 15000);
if (!token()) showSignIn();
else {
	api("/v1/status").then(start, (err) => {
		// A wrong token was handled by request() (sign-in form); anything else still shows the view.
		if (!(err instanceof ApiError && err.status === 401)) {
			start(null);
			fail(err);
		}
	});
}
