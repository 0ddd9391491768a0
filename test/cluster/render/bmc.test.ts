import { describe, expect, it } from 'vitest';
import { bmcAddress } from '../../../src/cluster/render/bmc.js';

describe('bmcAddress', () => {
  it('redfish virtual media, IPv6 in brackets, port and system id', () => {
    expect(bmcAddress({ bmc: { vendor: 'redfish-virtualmedia', address: 'fd00::1', port: 8000 } })).toBe(
      'redfish-virtualmedia://[fd00::1]:8000/redfish/v1/Systems/1',
    );
    expect(bmcAddress({ bmc: { vendor: 'redfish', address: '[fd00::1]', systemId: 'local/vm-0' } })).toBe(
      'redfish-virtualmedia://[fd00::1]/redfish/v1/Systems/local/vm-0',
    );
    expect(bmcAddress({ bmc: { vendor: 'redfish', address: '192.168.125.1', port: 9000 } })).toBe(
      'redfish-virtualmedia://192.168.125.1:9000/redfish/v1/Systems/1',
    );
  });

  it('iDRAC uses System.Embedded.1', () => {
    expect(bmcAddress({ bmc: { vendor: 'idrac', address: 'idrac-w0.example.com' } })).toBe(
      'idrac-virtualmedia://idrac-w0.example.com/redfish/v1/Systems/System.Embedded.1',
    );
  });

  it('iLO 5, iLO 4 and IPMI', () => {
    expect(bmcAddress({ bmc: { vendor: 'ilo5', address: '10.0.0.5' } })).toBe(
      'ilo5-virtualmedia://10.0.0.5/redfish/v1/Systems/1',
    );
    expect(bmcAddress({ bmc: { vendor: 'ilo4', address: '10.0.0.4' } })).toBe('ilo4-virtualmedia://10.0.0.4');
    expect(bmcAddress({ bmc: { vendor: 'ipmi', address: 'bmc.example.com', port: 623 } })).toBe(
      'ipmi://bmc.example.com:623',
    );
    expect(bmcAddress({ bmc: { vendor: 'ipmi', address: 'fd00::9', port: 6230 } })).toBe(
      'ipmi://[fd00::9]:6230',
    );
  });

  it('a full URL is used as written', () => {
    const url = 'idrac-virtualmedia+https://[fd00::2]/redfish/v1/Systems/System.Embedded.1';
    expect(bmcAddress({ bmc: { url } })).toBe(url);
  });
});
