/**
 * The annotation, finalizer, label and parameter keys that upstream
 * external-provisioner, Kubernetes and users read and write, quoted exactly.
 */

export const ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner";
export const ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner";
export const ANN_MIGRATED_TO = "pv.kubernetes.io/migrated-to";
export const ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node";
export const ANN_BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class";
export const ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by";
export const ANN_DELETION_SECRET_NAME = "volume.kubernetes.io/provisioner-deletion-secret-name";
export const ANN_DELETION_SECRET_NAMESPACE =
  "volume.kubernetes.io/provisioner-deletion-secret-namespace";
export const ANN_MODIFY_SECRET_NAME = "volume.kubernetes.io/controller-modify-secret-name";
export const ANN_MODIFY_SECRET_NAMESPACE =
  "volume.kubernetes.io/controller-modify-secret-namespace";

/** The claim annotations provisioning's decisions and the Immediate race read. */
export const CLAIM_DECISION_ANNOTATIONS: readonly string[] = [
  ANN_SELECTED_NODE,
  ANN_STORAGE_PROVISIONER,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_BETA_STORAGE_CLASS,
  ANN_MIGRATED_TO,
];

/** Finalizer upstream puts on every PV it provisions (reclaim policy Delete). */
export const PV_PROTECTION_FINALIZER = "external-provisioner.volume.kubernetes.io/finalizer";

/** PV volumeAttributes key holding the provisioner identity (informational). */
export const PROVISIONER_IDENTITY_KEY = "storage.kubernetes.io/csiProvisionerIdentity";

/** StorageClass parameter keys with this prefix are the provisioner's, never the driver's. */
export const CSI_PARAMETER_PREFIX = "csi.storage.k8s.io/";

/** The labels that mark a CSIStorageCapacity object as the one of a driver on a node. */
export const DRIVER_NAME_LABEL = "csi.storage.k8s.io/drivername";
export const MANAGED_BY_LABEL = "csi.storage.k8s.io/managed-by";

/**
 * Finalizer on a claim that is the source of a clone in progress
 * (external-provisioner's pvcCloneFinalizer, pkg/controller/controller.go).
 */
export const CLONE_PROTECTION_FINALIZER = "provisioner.storage.kubernetes.io/cloning-protection";

/**
 * Finalizer on a VolumeSnapshot that a volume is being restored from
 * (external-provisioner's snapshotSourceProtectionFinalizer).
 */
export const SNAPSHOT_SOURCE_PROTECTION_FINALIZER =
  "provisioner.storage.kubernetes.io/volumesnapshot-as-source-protection";

/** VolumeSnapshotContent annotation that allows a restore to change the volume mode. */
export const ANN_ALLOW_VOLUME_MODE_CHANGE =
  "snapshot.storage.kubernetes.io/allow-volume-mode-change";

/** The API group of VolumeSnapshots and their contents. */
export const SNAPSHOT_API_GROUP = "snapshot.storage.k8s.io";
