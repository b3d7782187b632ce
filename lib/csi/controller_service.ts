/**
 * The CSI Controller service calls the controllers make (CreateVolume,
 * DeleteVolume, GetCapacity, ControllerExpandVolume, and ListVolumes and
 * ControllerGetVolume for the start-up check of this node's volumes), as
 * their ports name them, over any CsiCaller:
 * the connection, or the connection wrapped by the capacity refresh. Each
 * has the connection's default deadline (--timeout).
 */
import type { CsiCaller } from "./connection.ts";
import type {
  ControllerExpandVolumeRequest,
  ControllerExpandVolumeResponse,
  ControllerGetVolumeRequest,
  ControllerGetVolumeResponse,
  CreateVolumeRequest,
  CreateVolumeResponse,
  DeleteVolumeRequest,
  GetCapacityRequest,
  GetCapacityResponse,
  ListVolumesRequest,
  ListVolumesResponse,
} from "./types.ts";

/** The Controller service's volume and capacity calls. */
export class CsiController {
  readonly #csi: CsiCaller;

  constructor(csi: CsiCaller) {
    this.#csi = csi;
  }

  createVolume(request: CreateVolumeRequest, signal?: AbortSignal): Promise<CreateVolumeResponse> {
    return this.#csi.call("CreateVolume", request, signal === undefined ? {} : { signal });
  }

  async deleteVolume(request: DeleteVolumeRequest, signal?: AbortSignal): Promise<void> {
    await this.#csi.call("DeleteVolume", request, signal === undefined ? {} : { signal });
  }

  getCapacity(request: GetCapacityRequest, signal: AbortSignal): Promise<GetCapacityResponse> {
    return this.#csi.call("GetCapacity", request, { signal });
  }

  listVolumes(request: ListVolumesRequest, signal: AbortSignal): Promise<ListVolumesResponse> {
    return this.#csi.call("ListVolumes", request, { signal });
  }

  getVolume(
    request: ControllerGetVolumeRequest,
    signal: AbortSignal,
  ): Promise<ControllerGetVolumeResponse> {
    return this.#csi.call("ControllerGetVolume", request, { signal });
  }

  controllerExpandVolume(
    request: ControllerExpandVolumeRequest,
    signal: AbortSignal,
  ): Promise<ControllerExpandVolumeResponse> {
    return this.#csi.call("ControllerExpandVolume", request, { signal });
  }
}
