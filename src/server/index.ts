/** The server domain as the rest of airgap sees it: everything outside src/server/ imports from here. */
export { DEFAULT_GRACE_MS, DEFAULT_PORT, serveImages, type RunningImageServer } from './listen.js';
export { fetchBootImages, type BootImagesSource, type FetchBootImagesResult } from './rhcos/fetch.js';
export { writeOsImages } from './os-images.js';
