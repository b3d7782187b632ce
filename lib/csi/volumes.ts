/**
 * The two CSI calls that create and delete volumes, as the provisioning and
 * delete controllers' ports name them, over any CsiCaller (the connection,
 * or the connection wrapped by the capacity refresh).
 */
import type { CsiCaller } from "./connection.ts";
import type { CreateVolumeRequest, CreateVolumeResponse, DeleteVolumeRequest } from "./types.ts";

/** CreateVolume and DeleteVolume with the connection's default deadline (--timeout). */
export class CsiVolumes {
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
}
