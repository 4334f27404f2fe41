export { webhooksService } from "./service.js";
export { MEETING_EVENTS_CONSUMER as WEBHOOKS_MEETING_EVENTS_CONSUMER } from "./consumers/meetingEvents.js";
