export { invitesService } from "./service.js";
export { MEETING_EVENTS_CONSUMER } from "./consumers/meetingEvents.js";
