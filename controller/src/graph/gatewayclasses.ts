import type { GatewayClass } from '../resources/types';
import { gatewayClassConditions } from '../conditions';
import type { GatewayClassNode } from './types';

/** Our GatewayClasses (controllerName matches), each Accepted. */
export function buildGatewayClasses(classes: GatewayClass[], controllerName: string): GatewayClassNode[] {
  return classes
    .filter((gc) => gc.spec.controllerName === controllerName)
    .map((gc) => ({
      name: gc.metadata.name,
      generation: gc.metadata.generation,
      controllerName: gc.spec.controllerName,
      accepted: true,
      conditions: [
        gc.spec.parametersRef
          ? gatewayClassConditions.parametersIgnored('parametersRef is not supported by this controller')
          : gatewayClassConditions.accepted(),
        gatewayClassConditions.supportedVersion(),
      ],
    }));
}
