export { isNonPublicAddress } from "./nonPublicAddress.js";
