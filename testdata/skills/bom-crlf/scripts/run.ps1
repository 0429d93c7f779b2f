Write-Output 'ok'
