/** The project's in-cluster API: names and custom resources. Re-exports only. */
export * from "./crds.js";
export * from "./names.js";
export * from "./offloading.js";
