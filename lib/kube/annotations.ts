/** Annotation, finalizer and label keys shared with upstream; quoted exactly (reference §2-§5). */

export const ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner";
export const ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner";
export const ANN_MIGRATED_TO = "pv.kubernetes.io/migrated-to";
export const ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";
export const ANN_ALPHA_SELECTED_NODE = "volume.alpha.kubernetes.io/selected-node";
export const ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class";
export const ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by";
export const ANN_DELETION_SECRET_NAME = "volume.kubernetes.io/provisioner-deletion-secret-name";
export const ANN_DELETION_SECRET_NAMESPACE =
  "volume.kubernetes.io/provisioner-deletion-secret-namespace";
export const ANN_MODIFY_SECRET_NAME = "volume.kubernetes.io/controller-modify-secret-name";
export const ANN_MODIFY_SECRET_NAMESPACE =
  "volume.kubernetes.io/controller-modify-secret-namespace";

/** Finalizer upstream puts on every PV it provisions (reclaim policy Delete). */
export const PV_PROTECTION_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer";

/** PV volumeAttributes key holding the provisioner identity (informational). */
export const PROVISIONER_IDENTITY_KEY = "storage.kubernetes.io/csiProvisionerIdentity";
